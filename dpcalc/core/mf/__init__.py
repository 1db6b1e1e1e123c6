"""Matrix-factorisation mechanisms: DP-FTRL's tree aggregation, banded and general strategy matrices.

A matrix mechanism releases C x + z for a lower-triangular strategy matrix C (one row and column
per training step), the steps' clipped gradient sums x and Gaussian noise z; the model updates are
a post-processing of that release. Its privacy is a Gaussian mechanism's at noise
sigma / sensitivity, where the sensitivity of C depends on the steps a record may take part in
(the participation schema), or, for banded C with cyclic Poisson sampling, a subsampled Gaussian
run (amplified BandMF). docs/matrix-factorisation.md states the mathematics.

Modules: `strategy` (the matrix C, from an array or banded Toeplitz coefficients), `participation`
(the schema: at most k participations at least s steps apart, and the dynamic programs over its
patterns), `sensitivity` (the sensitivity of C under a schema, exact or a certified upper bound),
`accounting` (the three mechanisms as phases for the PLD engine).
"""
