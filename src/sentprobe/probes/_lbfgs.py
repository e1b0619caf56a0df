"""L-BFGS for many independent problems at once (one per grid point), sharing every evaluation.

Probing trains the same model under several regularisation strengths. Stacking their weights
turns G small matrix products into one large one, which is what a CPU BLAS is fast at. Each
problem keeps its own curvature history, step length and stopping state, so the batch behaves
exactly like G separate L-BFGS runs.

An optional preconditioner replaces L-BFGS's scalar initial inverse Hessian ``gamma * I`` by
``gamma * P`` (Nocedal & Wright 2006, sec. 7.2): when ``P`` approximates the inverse Hessian
(for logistic regression, the inverse of the features' second-moment matrix plus the penalty),
an ill-conditioned problem converges in a handful of iterations instead of hundreds. It changes
the path to the optimum, never the objective or the stopping rule.
"""

from __future__ import annotations

from collections.abc import Callable

import torch

from sentprobe.probes._common import row_sums

# fun(W, idx) -> (loss (g,), grad (g, P)) for the problems ``idx`` whose weights are W (g, P).
Objective = Callable[[torch.Tensor, torch.Tensor], tuple[torch.Tensor, torch.Tensor]]
# precond(Q, idx) -> P applied to each row of Q (g, P): an approximate inverse Hessian per problem.
Preconditioner = Callable[[torch.Tensor, torch.Tensor], torch.Tensor]


def _dot(a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """Row-wise dot products, summed in an order that does not follow the thread count (a
    batched matrix product split a single long row between threads)."""
    return row_sums(a * b)


def _rows(t: torch.Tensor, sel: torch.Tensor | None) -> torch.Tensor:
    """Rows ``sel`` of ``t``; all of them, without a copy, when ``sel`` is None (all problems
    active: e.g. a single 1000-class problem, where every copy moves megabytes)."""
    return t if sel is None else t[sel]


def batched_lbfgs(
    fun: Objective,
    w0: torch.Tensor,
    *,
    max_iter: int = 200,
    gtol: float = 1e-5,
    history: int = 10,
    precond: Preconditioner | None = None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Minimise G objectives from ``w0`` (G, P). Returns final weights and iterations per problem.

    A problem stops when its largest gradient entry falls below ``gtol``, when its line search
    finds no decrease (30 halvings), or at ``max_iter``. Stopped problems drop out of the
    batch, so the cost follows the problems still running. There is no test on the change of
    the loss: near the optimum that change is a few ulps of the loss, so whether it passed a
    threshold would depend on the rounding of the machine's sums, while the gradient's entries
    are far above their rounding at any useful ``gtol``. Keep ``gtol`` above the gradient's
    rounding (about ``1e-7`` for float32 mean losses) and the losses ``fun`` returns precise
    (summed in float64) so the line search's comparisons are decided by the objective, not
    by the machine.
    """
    W = w0.clone()
    G = W.shape[0]
    dev = W.device  # every problem state lives where the weights do (cpu or cuda)
    iters = torch.zeros(G, dtype=torch.long, device=dev)
    idx = torch.arange(G, device=dev)
    f, g = fun(W, idx)
    S: list[torch.Tensor] = []  # (G, P) each; rows of stopped problems are ignored
    Y: list[torch.Tensor] = []
    R: list[torch.Tensor] = []  # rho = 1 / (s . y), 0 where the pair was skipped
    gamma = torch.full((G,), 1.0, dtype=W.dtype, device=dev)
    first = True
    active = torch.ones(G, dtype=torch.bool, device=dev)

    for it in range(1, max_iter + 1):
        a_idx = idx[active]
        everyone = len(a_idx) == G
        sel = None if everyone else a_idx
        Wa, fa, ga = _rows(W, sel), _rows(f, sel), _rows(g, sel)
        # Two-loop recursion, vectorised over the active problems.
        q = ga.clone()
        alphas = []
        for s, y, rho in zip(reversed(S), reversed(Y), reversed(R)):
            s, y, rho = _rows(s, sel), _rows(y, sel), _rows(rho, sel)
            a = rho * _dot(s, q)
            q.addcmul_(a[:, None], y, value=-1.0)
            alphas.append(a)
        if precond is not None:
            q = precond(q, a_idx)
        if first:
            # Scale the first step so that it moves no parameter by more than 1.
            scale = 1.0 / q.abs().amax(-1).clamp_min(1e-12)
            r = q * scale.clamp(max=1.0)[:, None]
        else:
            r = q * gamma[a_idx, None]
        for s, y, rho, a in zip(S, Y, R, reversed(alphas)):
            s, y, rho = _rows(s, sel), _rows(y, sel), _rows(rho, sel)
            b = rho * _dot(y, r)
            r.addcmul_((a - b)[:, None], s)
        d = -r
        gtd = _dot(ga, d)
        bad = gtd >= 0  # not a descent direction: fall back to steepest descent
        if bad.any():
            d[bad] = -ga[bad]
            gtd = _dot(ga, d)

        # Backtracking Armijo line search, one step length per problem.
        t = torch.ones(len(a_idx), dtype=W.dtype, device=dev)
        for _ in range(30):
            Wn = torch.addcmul(Wa, t[:, None], d)
            fn, gn = fun(Wn, a_idx)
            ok = fn <= fa + 1e-4 * t * gtd
            stalled = ~ok & (t < 1e-8)  # no decrease along d: give up (stopped below)
            if bool((ok | stalled).all()):
                break
            t = torch.where(ok, t, t * 0.5)

        s_new, y_new = Wn - Wa, gn - ga
        sy = _dot(s_new, y_new)
        valid = sy > 1e-10
        rho_new = torch.where(valid, 1.0 / sy.clamp_min(1e-10), torch.zeros_like(sy))
        if everyone:
            S.append(s_new)
            Y.append(y_new)
            R.append(rho_new)
        else:
            S.append(torch.zeros_like(W).index_copy_(0, a_idx, s_new))
            Y.append(torch.zeros_like(W).index_copy_(0, a_idx, y_new))
            R.append(torch.zeros(G, dtype=W.dtype, device=dev).index_copy_(0, a_idx, rho_new))
        if len(S) > history:
            S.pop(0)
            Y.pop(0)
            R.pop(0)
        Py = y_new if precond is None else precond(y_new, a_idx)
        yy = _dot(y_new, Py).clamp_min(1e-20)  # gamma = s.y / y.P.y
        gamma[a_idx] = torch.where(valid, sy / yy, _rows(gamma, sel))
        first = False

        if everyone:
            W, f, g = Wn, fn, gn
        else:
            W[a_idx], f[a_idx], g[a_idx] = Wn, fn, gn
        iters[a_idx] = it
        done = (gn.abs().amax(-1) < gtol) | stalled
        active[a_idx[done]] = False
        if not bool(active.any()):
            break
    return W, iters
