"""The networks that train: where an initialization shows in the loss, not only in a variance.

Each is small and in numpy, its backward pass written out by hand.

    training       a small MLP classifier: backprop, SGD and Adam, the digits data
    normalization  BatchNorm and LayerNorm, forward and backward
    lsuv           LSUV, the init read from a batch
    mup            init and learning rate together: standard parametrization against muP
    transformer    a small pre-LN decoder, forward only
"""
