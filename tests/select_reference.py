"""Dense n x n references for the tests of sslkit.select, written from paper B's formulas (they exist only in the
tests: the library never builds an n x n matrix), and the toy data they run on."""

from __future__ import annotations

import numpy as np

from sslkit.data import rdss_toy_distribution


def dense_kernel(A, B, sigma):
    d2 = ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)
    return np.exp(-d2 / sigma**2)


def brute_gkhr(X, m, alpha, sigma, replace=False):
    """Algorithm 1 (replace=False) / Algorithm 2 (replace=True), line by line, with a dense kernel."""
    K = dense_kernel(X, X, sigma)
    n = len(X)
    mu = K.sum(0) / n  # line 1
    S = np.zeros(n)  # line 2
    chosen = []
    for p in range(1, m + 1):
        obj = S - alpha * mu
        if not replace:
            obj[chosen] = np.inf  # argmin over [n] \ I
        i = int(np.argmin(obj))  # line 4
        beta = 1.0 / p
        S = (1 - beta) * S + beta * K[i]  # line 5
        chosen.append(i)
    return np.array(chosen)


def frank_wolfe_herding(X, m, sigma, alpha=1.0):
    """Kernel herding as Frank-Wolfe on the weights (App. A.1; Bach et al. 2012) for alpha = 1.

    w_0 = 0; s_p = argmin_{e_i} e_i^T (K w_p - alpha p), w_{p+1} = p/(p+1) w_p + e_i/(p+1).
    """
    K = dense_kernel(X, X, sigma)
    n = len(X)
    pvec = K @ np.ones(n) / n
    w = np.zeros(n)
    out = []
    for p in range(m):
        i = int(np.argmin(K @ w - alpha * pvec))
        w = p / (p + 1) * w
        w[i] += 1 / (p + 1)
        out.append(i)
    return np.array(out), w


def dense_alpha_mmd2(X, idx, alpha, sigma):
    """eq. (6), second line, dense."""
    K = dense_kernel(X, X, sigma)
    n, m = len(X), len(idx)
    return alpha**2 * K.sum() / n**2 + K[np.ix_(idx, idx)].sum() / m**2 - 2 * alpha * K[:, idx].sum() / (m * n)


def toy_data():
    """Paper B App. D.1's two-Gaussian toy set: 300 points."""
    X, _ = rdss_toy_distribution("gmm2", 300, seed=1)
    return X
