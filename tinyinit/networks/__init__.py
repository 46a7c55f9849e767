"""The networks that train: where an initialization shows in the loss, not only in a variance.

Each is small and in numpy, its backward pass written out by hand.

    mlp             a small MLP classifier: its forward pass, its loss, backprop by hand
    optimizers      SGD and Adam, one formula each
    training        the training loop: a step, a Trainer that takes steps, train
    digits          the handwritten digits it learns
    normalization   BatchNorm and LayerNorm, forward and backward
    lsuv            LSUV, the init read from a batch
    mup             init and learning rate together: standard parametrization against muP
    transformer     a small pre-LN decoder, forward only
    residual_audit  a model's residual output projections by name: did 1/sqrt(2N) reach them?
"""
