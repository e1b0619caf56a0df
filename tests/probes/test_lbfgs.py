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


def test_a_problem_whose_line_search_finds_no_decrease_stops():
    """No loss-change test ends a stalled problem, so a line search that fails must: here the
    gradient points the wrong way (every step goes uphill), the other problem converges."""
    good = _quadratics([[1.0, 2.0, 3.0]])

    def fun(W, idx):
        f, g = good(W, torch.zeros(len(idx), dtype=torch.long))
        return f, torch.where((idx == 1)[:, None], -g, g)  # problem 1's gradient lies

    # float64 weights: a float32 loss of 3 would not register the uphill steps shorter than
    # an ulp, and the line search would accept one as no worse
    W, iters = batched_lbfgs(fun, torch.zeros(2, 3, dtype=torch.float64), max_iter=50, gtol=1e-6)
    assert torch.allclose(W[0], torch.ones(3, dtype=torch.float64), atol=1e-4)
    assert iters[1] == 1  # stopped by its first failed line search, not by max_iter
    assert W[1].abs().max() < 1e-7


def test_stops_on_the_gradient_not_on_a_small_change_of_the_loss():
    """Near the optimum a loss change is a few ulps of the loss, and whether it passed a
    threshold would follow the machine's rounding: only the gradient stops a problem. A large
    constant in the loss makes every change tiny relative to it; the problem still runs until
    its gradient is below ``gtol``."""
    quad = _quadratics([[1.0, 10.0, 100.0]])

    def fun(W, idx):
        f, g = quad(W, idx)
        return f + 1e9, g

    W, _ = batched_lbfgs(fun, torch.zeros(1, 3, dtype=torch.float64), max_iter=200, gtol=1e-6)
    assert torch.allclose(W, torch.ones(1, 3, dtype=torch.float64), atol=1e-5)
