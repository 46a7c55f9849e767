"""The signal's physics: how a variance travels through a deep network, measured and in theory.

The measurements draw their weights with the core; the theory is the mean-field recursion and
the Gaussian integrals under it.

    propagation       the depth experiment: `forward_values`, and `simulate` over seeds
    propagation_fast  the live explorer's fast way to simulate's numbers, tested equal
    depth_result      one depth experiment's settings and its result over seeds
    mean_field        the Gaussian integrals: E[phi(z)^2], the mean-field map, its recursion
                      over depth (`mean_field`) and its fixed point
    variance          the variance of a sum, measured
    gains             gains computed from the activation itself
    residual          the residual stream and GPT-2's 1/sqrt(2N)
    diagnostics       the numbers read off a network to tell a bad init while it trains
"""
