from sentprobe.cli.main import main

main()
