import torch

from sentprobe.probes._lbfgs import batched_lbfgs


def _quadratics(scales):
    """Independent ill-conditioned quadratics 0.5 * sum(s_i * (w_i - 1)^2)."""
    S = torch.tensor(scales, dtype=torch.float32)

    def fun(W, idx):
        s = S[idx]
        return 0.5 * (s * (W - 1) ** 2).sum(-1), s * (W - 1)

    return fun


def test_solves_each_problem_to_its_own_optimum():
    scales = [[1.0, 10.0, 100.0], [0.5, 0.5, 0.5], [1.0, 1000.0, 1.0]]
    W, iters = batched_lbfgs(_quadratics(scales), torch.zeros(3, 3), max_iter=200, gtol=1e-6)
    assert torch.allclose(W, torch.ones(3, 3), atol=1e-3)
    assert (iters > 0).all()


def test_batch_equals_separate_runs():
    scales = [[1.0, 10.0, 100.0], [3.0, 0.1, 7.0]]
    W, _ = batched_lbfgs(_quadratics(scales), torch.zeros(2, 3), max_iter=50)
    for i, s in enumerate(scales):
        Wi, _ = batched_lbfgs(_quadratics([s]), torch.zeros(1, 3), max_iter=50)
        assert torch.allclose(W[i], Wi[0], atol=1e-5)


def test_preconditioner_reaches_the_same_optimum_in_fewer_steps():
    scales = [[1.0, 30.0, 900.0], [2.0, 2.0, 4000.0]]
    S = torch.tensor(scales)

    def exact_inverse(Q, idx):
        return Q / S[idx]

    plain, plain_iters = batched_lbfgs(_quadratics(scales), torch.zeros(2, 3), gtol=1e-6)
    pre, pre_iters = batched_lbfgs(
        _quadratics(scales), torch.zeros(2, 3), gtol=1e-6, precond=exact_inverse
    )
    assert torch.allclose(pre, torch.ones(2, 3), atol=1e-4)
    assert torch.allclose(plain, pre, atol=1e-3)
    assert (pre_iters <= 2).all() and (plain_iters > 3 * pre_iters).all()
