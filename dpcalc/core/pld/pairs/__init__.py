"""Dominating pairs of the mechanisms the PLD accountant knows, as privacy-loss distributions.

A pair (P, Q) is described by its privacy loss L = log(dP/dQ) under P: for any loss interval
[a, b) the model returns P(a <= L < b) and Q(a <= L < b) as logarithms with bounds on their
relative errors (`base.CellMasses`), plus its moments and MGF by quadrature. One pair a module:

- `base`: the `Pair` interface, `CellMasses` and the shared helpers;
- `gaussian`: the Poisson-subsampled Gaussian, remove and add (add-remove or zero-out);
- `laplace`: the Poisson-subsampled Laplace mechanism;
- `replace_one`: the Poisson-subsampled Gaussian under replace-one (Lebeda et al. 2024);
- `symmetrised`: the two-part pair of fixed-size batches (Zhu, Dong, Wang 2022, Prop. 30);
- `mixture`: the user-level binomial mixture (Ganesh 2024); `shuffle`: the largest batch sum of a
  shuffled epoch (a lower bound);
- `allocation`: an epoch of random allocation, bracketed by two lattice pairs given as atoms
  (`atoms`), and `lognormal_lattice` and `lattice_sums`, the certified lattices and their sums
  by FFT behind it;
- `capped`: a pair drawn at random with the draw revealed (a capped Poisson step's bound).
"""

from __future__ import annotations

from dpcalc.core.pld.pairs.base import CellMasses, Pair
from dpcalc.core.pld.pairs.gaussian import GaussianPair, _SubsampledRatio
from dpcalc.core.pld.pairs.laplace import LaplacePair
from dpcalc.core.pld.pairs.replace_one import ReplaceOnePair
from dpcalc.core.pld.pairs.symmetrised import SymmetrisedPair

__all__ = [
    "CellMasses",
    "GaussianPair",
    "LaplacePair",
    "Pair",
    "ReplaceOnePair",
    "SymmetrisedPair",
    "_SubsampledRatio",
]
