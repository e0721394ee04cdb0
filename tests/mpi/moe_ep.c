/* tests/mpi/moe_ep.c: the MoE layer's ep exchange (exec/xformer_moe.h over
 * exec/moe_comm_mpi.c) against the single-process reference tests/moe_ref.h, under
 * `mpirun -np EP`. Every rank draws the tokens of every rank (a seed per rank), runs the layer
 * on its own with its E/EP experts, and checks: its weights are the ep-1 weights' slices (bit
 * for bit); its output and input gradient equal the reference's for its tokens; the router's
 * and the shared expert's gradients, summed over the group (as the executor's allreduce over
 * ep does), equal the reference's over all tokens; its experts' gradients equal the
 * reference's for those experts (each sums the copies of every rank's tokens). Tolerance 2e-5
 * of each tensor's largest value (fp32 GEMMs against a double reference). Prints the exchange's
 * measured time and bytes. Exit 0 when all hold. */
#include <config.h>

#include <math.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "exec/xformer_moe.h"
#include "tests/moe_ref.h"
#include "util/err.h"

#define RTOL 2e-5

static double rel(const float *a, const double *b, size_t n)
{
    double dm = 0, bm = 0;
    for (size_t i = 0; i < n; i++) {
        double d = fabs((double)a[i] - b[i]);
        dm = d > dm ? d : dm;
        bm = fabs(b[i]) > bm ? fabs(b[i]) : bm;
    }
    return bm == 0 ? dm : dm / bm;
}

static void tokens(float *x, size_t n, int rank, int salt)
{
    uint64_t s = 0x1234u + 7919u * (uint64_t)rank + 104729u * (uint64_t)salt;
    for (size_t i = 0; i < n; i++) {
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u1 = ((double)(s >> 11) + 0.5) * 0x1.0p-53;
        s = s * 6364136223846793005ull + 1442695040888963407ull;
        double u2 = (double)(s >> 11) * 0x1.0p-53;
        x[i] = (float)(sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2));
    }
}

/* One case; returns the failures on this rank. */
static int run_case(const struct moe_dims *d, int N, const char *label)
{
    int ep, me, bad = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &ep);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    struct mt_err e = {0};
    struct moe_ep g;
    if (moe_ep_mpi_open(&g, 0, me, 30.0, &e) != MT_OK) {
        fprintf(stderr, "%s\n", e.msg);
        return 1;
    }
    size_t n1 = moe_param_count(d, 1), nl = moe_param_count(d, ep), C = (size_t)d->channels;
    float *w1 = malloc(n1 * sizeof(float)), *wl = malloc(nl * sizeof(float));
    float *gl = calloc(nl, sizeof(float));
    moe_init_params(d, 1, 0, 42, 1, 4, w1);
    moe_init_params(d, ep, me, 42, 1, 4, wl);
    /* the router of a trained model routes less uniformly than the init's: larger weights */
    for (size_t i = 0; i < (size_t)d->experts * C; i++) {
        w1[i] *= 25.0f;
        wl[i] *= 25.0f;
    }
    int El = d->experts / ep;
    size_t eb = moe_expert_off(d, 1) - moe_expert_off(d, 0);
    if (memcmp(w1, wl, moe_expert_off(d, 0) * sizeof(float)) != 0 ||
        memcmp(w1 + moe_expert_off(d, me * El), wl + moe_expert_off(d, 0),
               El * eb * sizeof(float)) != 0) {
        fprintf(stderr, "rank %d: %s: the ep-%d weights are not the ep-1 slices\n", me, label, ep);
        bad++;
    }
    size_t nx = (size_t)N * C;
    float *xall = malloc(ep * nx * sizeof(float)), *dall = malloc(ep * nx * sizeof(float));
    for (int r = 0; r < ep; r++) {
        tokens(xall + r * nx, nx, r, 0);
        tokens(dall + r * nx, nx, r, 1);
    }
    float *x = xall + me * nx, *dout = dall + me * nx;
    float *out = malloc(nx * sizeof(float)), *dx = malloc(nx * sizeof(float)), aux;
    struct moe_act *a;
    if (moe_forward(d, &g, wl, x, N, out, &aux, &a, &e) != MT_OK ||
        moe_backward(d, &g, wl, gl, &a, dout, 1.0f, dx, &e) != MT_OK) {
        fprintf(stderr, "rank %d: %s: %s\n", me, label, e.msg);
        return bad + 1;
    }
    /* the replicated part's gradients: summed over the group */
    size_t nrep = moe_expert_off(d, 0);
    MPI_Allreduce(MPI_IN_PLACE, gl, (int)nrep, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);

    /* the reference: this rank's tokens for out and dx; every rank's for the gradients
     * (the aux loss is each rank's own, over its tokens, so the reference runs rank by rank) */
    double *rout = malloc(nx * sizeof(double)), *rdx = malloc(nx * sizeof(double));
    double *rd = malloc(nx * sizeof(double)), *rg = calloc(n1, sizeof(double)), raux = 0;
    double *scratch = malloc(nx * sizeof(double)), sa;
    for (int r = 0; r < ep; r++) {
        for (size_t i = 0; i < nx; i++)
            rd[i] = dall[r * nx + i];
        moe_ref(d, w1, xall + r * nx, N, r == me ? rout : scratch, r == me ? &raux : &sa, rd, 1.0,
                rg, r == me ? rdx : scratch);
    }
    double w_out = rel(out, rout, nx), w_dx = rel(dx, rdx, nx);
    double w_router = rel(gl, rg, moe_shared_off(d));
    double w_shared = d->shared_ffn ? rel(gl + moe_shared_off(d), rg + moe_shared_off(d),
                                          nrep - moe_shared_off(d))
                                    : 0;
    double w_exp = 0;
    for (int le = 0; le < El; le++) {
        double w = rel(gl + moe_expert_off(d, le), rg + moe_expert_off(d, me * El + le), eb);
        w_exp = w > w_exp ? w : w_exp;
    }
    double w_aux = fabs(aux - raux) / (fabs(raux) > 1e-30 ? fabs(raux) : 1);
    printf("rank %d/%d %s: out %.2g dx %.2g router %.2g shared %.2g experts %.2g aux %.2g; "
           "a2a %ld exchanges, %.0f bytes to others, %.3g ms\n",
           me, ep, label, w_out, w_dx, w_router, w_shared, w_exp, w_aux, g.a2a_calls, g.a2a_bytes,
           1e3 * g.a2a_s);
    if (!(w_out < RTOL && w_dx < RTOL && w_router < RTOL && w_shared < RTOL && w_exp < RTOL &&
          w_aux < 1e-5)) {
        fprintf(stderr, "rank %d: %s: beyond %g of the reference\n", me, label, RTOL);
        bad++;
    }
    if (g.a2a_calls != 4 || (ep > 1 && !(g.a2a_bytes > 0))) {
        fprintf(stderr, "rank %d: %s: %ld exchanges, %.0f bytes\n", me, label, g.a2a_calls,
                g.a2a_bytes);
        bad++;
    }
    moe_ep_mpi_close(&g);
    free(w1), free(wl), free(gl), free(xall), free(dall), free(out), free(dx);
    free(rout), free(rdx), free(rd), free(rg), free(scratch);
    return bad;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int bad = 0;
    struct moe_dims plain = {16, 4, 2, 12, 0, 0, 0.0f};
    bad += run_case(&plain, 24, "top-2 of 4");
    struct moe_dims mixtral = {16, 8, 2, 12, 0, 1, 0.0f};
    bad += run_case(&mixtral, 20, "top-2 of 8, renormalised");
    struct moe_dims deepseek = {16, 8, 3, 8, 10, 0, 0.01f};
    bad += run_case(&deepseek, 16, "top-3 of 8, shared, aux loss");
    /* one token a rank, top-1: most (rank, expert) pairs exchange no row at all */
    struct moe_dims top1 = {8, 4, 1, 6, 0, 0, 0.0f};
    bad += run_case(&top1, 1, "top-1 of 4, one token a rank");
    int all = 0;
    MPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    return all == 0 ? 0 : 1;
}
