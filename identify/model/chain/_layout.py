"""A chain rig's parameter layout: theta~'s inertial part and the friction columns.

Plain Python, apart from the compiled kernels (_chain), so that a rig's description can be
read and checked without compiling anything.
"""

from __future__ import annotations

import re

import numpy as np

__all__ = ["CHAIN_FRICTION_TERMS", "friction_entry", "inertial_names", "inertial_normaliser",
           "link_pairs", "unpack_inertial"]

#: Brown-McPhee terms of one joint, the columns of a friction array (n, 4)
CHAIN_FRICTION_TERMS: tuple[str, ...] = ("Fc", "Fs", "vt", "b", "cd")

_FRICTION_NAME = re.compile(r"(Fc|Fs|vt|b|cd)([1-9][0-9]?)")


def friction_entry(name: str) -> tuple[int, int] | None:
    """(link, column), 0-based, of a joint friction term named as a result names it
    without its unit (Fc1, vt2, b1: the term, then the link from 1); None for another
    name."""
    m = _FRICTION_NAME.fullmatch(name)
    if m is None:
        return None
    return int(m.group(2)) - 1, CHAIN_FRICTION_TERMS.index(m.group(1))


def link_pairs(n: int) -> list[tuple[int, int]]:
    """(i, j), i < j, 0-based, in seed 002's order mu_12, mu_13, ..., mu_1n, mu_23, ..."""
    return [(i, j) for i in range(n) for j in range(i + 1, n)]


def inertial_names(n: int) -> tuple[str, ...]:
    """Names of theta~'s inertial part [mu_ij (i<j), kappa_i, nu_i]."""
    return (tuple(f"mu{i + 1}{j + 1}" for i, j in link_pairs(n))
            + tuple(f"kappa{i + 1}" for i in range(n)) + tuple(f"nu{i + 1}" for i in range(n)))


def inertial_normaliser(n: int) -> int:
    """Index in the inertial part of the parameter the others are divided by."""
    return n if n == 1 else len(link_pairs(n)) - 1  # n = 1: [kappa1, nu1] -> nu1


def unpack_inertial(theta: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(kappa (n,), mu (n, n) symmetric with a zero diagonal, nu (n,)) from theta~'s
    inertial part, in any common unit."""
    theta = np.asarray(theta, dtype=np.float64)
    pairs = link_pairs(n)
    mu = np.zeros((n, n))
    for c, (i, j) in enumerate(pairs):
        mu[i, j] = mu[j, i] = theta[c]
    k = len(pairs)
    return theta[k:k + n].copy(), mu, theta[k + n:k + 2 * n].copy()
