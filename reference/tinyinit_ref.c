/* tinyinit_ref.c: the spec (docs/spec.md) in plain C, one value at a time.
 *
 * A second implementation to hold tinyinit against, bit for bit. Build and run:
 *     cc -std=c99 -O2 -ffp-contract=off -o tinyinit_ref tinyinit_ref.c -lm
 *     ./tinyinit_ref normals 0 54 5
 * -ffp-contract=off: the spec rounds every product and sum; a fused multiply-add
 * would round once and change last bits. Output: one value a line, as the hex of
 * its bits (uint32 words, float64 uniforms and normals, float32 weights).
 * Usage: KIND SEED STREAM ARGS..., with ARGS by KIND (dims = d0 d1 ...):
 *   words|uniforms|normals n     uniform_init low high dims    normal_init std mean dims
 *   xavier_uniform gain dims     xavier_normal gain dims       trunc_normal std mean a b dims
 *   kaiming_uniform|kaiming_normal fan_out(0|1) gain dims      sparse sparsity std rows cols */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct { uint64_t state, inc; } pcg32;

static uint32_t next_u32(pcg32 *g) {
    uint64_t old = g->state;
    g->state = old * 6364136223846793005ULL + g->inc;
    uint32_t xorshifted = (uint32_t)(((old >> 18) ^ old) >> 27);
    uint32_t rot = (uint32_t)(old >> 59);
    return (xorshifted >> rot) | (xorshifted << ((-rot) & 31));
}

static pcg32 seeded(uint64_t seed, uint64_t stream) {
    pcg32 g = {0, (stream << 1) | 1};
    next_u32(&g);
    g.state += seed;
    next_u32(&g);
    return g;
}

static double uniform(pcg32 *g) {
    uint64_t a = next_u32(g), b = next_u32(g);
    return (double)((a >> 5) * 67108864 + (b >> 6)) / 9007199254740992.0;
}

/* n standard normals, Box-Muller on pairs; an odd n drops the last sine. */
static void normals(pcg32 *g, size_t n, double *z) {
    for (size_t k = 0; k < n; k += 2) {
        double u0 = uniform(g), u1 = uniform(g);
        double r = sqrt(-2.0 * log(1.0 - u0)), t = 2.0 * 3.141592653589793 * u1;
        z[k] = r * cos(t);
        if (k + 1 < n) z[k + 1] = r * sin(t);
    }
}

static void put32(float w) { uint32_t b; memcpy(&b, &w, 4); printf("%08x\n", b); }
static void put64(double x) { uint64_t b; memcpy(&b, &x, 8); printf("%016llx\n", (unsigned long long)b); }

int main(int argc, char **argv) {
    if (argc < 5) { fprintf(stderr, "usage: see the top of tinyinit_ref.c\n"); return 2; }
    const char *kind = argv[1];
    pcg32 g = seeded(strtoull(argv[2], NULL, 10), strtoull(argv[3], NULL, 10));
    int np = !strcmp(kind, "trunc_normal") ? 4
           : !strcmp(kind, "uniform_init") || !strcmp(kind, "normal_init") ? 2
           : !strncmp(kind, "kaiming", 7) || !strcmp(kind, "sparse") ? 2
           : !strcmp(kind, "words") || !strcmp(kind, "uniforms") || !strcmp(kind, "normals") ? 0 : 1;
    double p[4] = {0};
    for (int i = 0; i < np; i++) p[i] = strtod(argv[4 + i], NULL);
    size_t n = 1, ndim = (size_t)(argc - 4 - np), d[8] = {0};
    for (size_t i = 0; i < ndim; i++) n *= d[i] = strtoull(argv[4 + np + i], NULL, 10);
    size_t r = 1;  /* the receptive field: the product of the kernel dimensions */
    for (size_t i = 2; i < ndim; i++) r *= d[i];
    double fan_in = (double)(d[1] * r), fan_out = (double)(d[0] * r);
    double *z = malloc((n + 1) * sizeof *z);

    if (!strcmp(kind, "words")) for (size_t k = 0; k < n; k++) printf("%08x\n", next_u32(&g));
    else if (!strcmp(kind, "uniforms")) for (size_t k = 0; k < n; k++) put64(uniform(&g));
    else if (!strcmp(kind, "normals")) { normals(&g, n, z); for (size_t k = 0; k < n; k++) put64(z[k]); }
    else if (!strcmp(kind, "xavier_uniform") || !strcmp(kind, "kaiming_uniform") || !strcmp(kind, "uniform_init")) {
        double low, high;
        if (kind[0] == 'x') high = p[0] * sqrt(6.0 / (fan_in + fan_out));
        else if (kind[0] == 'k') high = sqrt(3.0) * (p[1] / sqrt(p[0] ? fan_out : fan_in));
        else high = p[1];
        low = kind[0] == 'u' ? p[0] : -high;
        double width = high - low;
        for (size_t k = 0; k < n; k++) put32((float)(low + width * uniform(&g)));
    } else if (!strcmp(kind, "sparse")) {
        size_t rows = d[0], cols = d[1], zeros = (size_t)ceil(p[0] * (double)rows);
        double *key = malloc((n + 1) * sizeof *key);
        normals(&g, n, z);
        for (size_t k = 0; k < n; k++) key[k] = uniform(&g);  /* column by column */
        for (size_t i = 0; i < rows; i++) for (size_t j = 0; j < cols; j++) {
            size_t rank = 0;  /* row i's place among its column's keys, ties by row */
            for (size_t m = 0; m < rows; m++) {
                double km = key[j * rows + m], ki = key[j * rows + i];
                rank += km < ki || (km == ki && m < i);
            }
            put32(rank < zeros ? 0.0f : (float)(z[i * cols + j] * p[1]));
        }
    } else if (!strcmp(kind, "trunc_normal")) {
        double std = p[0], mean = p[1], a = p[2], b = p[3];
        size_t *redraw = malloc((n + 1) * sizeof *redraw), m = 0;
        double *x = malloc((n + 1) * sizeof *x);
        normals(&g, n, z);
        for (size_t k = 0; k < n; k++) if ((x[k] = mean + std * z[k]) < a || x[k] > b) redraw[m++] = k;
        while (m) {  /* the rejected ones, in order, from one call of normals each round */
            size_t left = 0;
            normals(&g, m, z);
            for (size_t k = 0; k < m; k++)
                if ((x[redraw[k]] = mean + std * z[k]) < a || x[redraw[k]] > b) redraw[left++] = redraw[k];
            m = left;
        }
        for (size_t k = 0; k < n; k++) put32((float)x[k]);
    } else {  /* the normal initializers: std * z */
        double std = !strcmp(kind, "xavier_normal") ? p[0] * sqrt(2.0 / (fan_in + fan_out))
                   : !strcmp(kind, "kaiming_normal") ? p[1] / sqrt(p[0] ? fan_out : fan_in) : p[0];
        double mean = !strcmp(kind, "normal_init") ? p[1] : 0.0;
        normals(&g, n, z);
        for (size_t k = 0; k < n; k++) put32((float)(mean ? z[k] * std + mean : z[k] * std));
    }
    return 0;
}
