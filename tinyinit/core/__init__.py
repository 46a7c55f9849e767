"""The small core a student reads: the generator, the numbers it draws, the initializers.

Everything here is bit for bit as in docs/spec.md, and nothing here imports another layer:
the rest of tinyinit is built on these modules.

    pcg32          the generator PCG32: 32-bit words, uniforms, jump-ahead, blocks of states
    distributions  uniforms and the spec's Box-Muller normals
    init           fans, gains, the scales and every initializer of torch.nn.init
    activations    the one table of activations: phi, phi' and where they bend
    libm           the C library's log, cos and sin over whole arrays
    parallel       the thread pool that draws large blocks
    layouts        weight layouts and the fans a layer really has
    arguments      the argument checks every module shares, one wording for each refusal
"""
