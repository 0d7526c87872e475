// Recurrent layers: SSM_CONV (Mamba's causal depthwise conv over a window), SSM_SCAN (Mamba-1/2 selective
// scan), RWKV_WKV6, GATED_LINEAR_ATTN and RWKV_WKV7. Sequences are independent; heads (or channels) are split
// over the threads, so results do not depend on the thread count.

#include "ggml-cpu-impl.h"

#include <math.h>
#include <string.h>

// dst[i1, t, s] = sum_k sx[t + k, i1, s] * c[k, i1]
static void ssm_conv(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * sx = dst->src[0];
    const struct ggml_tensor * c  = dst->src[1];
    const int64_t d_conv = c->ne[0];
    const int64_t n_t = dst->ne[1], n_s = dst->ne[2];
    int64_t r0, r1;
    ggml_cpu_split_rows(dst->ne[0], params->ith, params->nth, &r0, &r1);
    for (int64_t s = 0; s < n_s; s++) {
        for (int64_t t = 0; t < n_t; t++) {
            for (int64_t i1 = r0; i1 < r1; i1++) {
                float sum = 0.0f;
                for (int64_t k = 0; k < d_conv; k++) {
                    const float xv = *(const float *) ((const char *) sx->data + (t + k) * sx->nb[0] + i1 * sx->nb[1] + s * sx->nb[2]);
                    const float cv = *(const float *) ((const char *) c->data + k * c->nb[0] + i1 * c->nb[1]);
                    sum += xv * cv;
                }
                *(float *) ((char *) dst->data + i1 * dst->nb[0] + t * dst->nb[1] + s * dst->nb[2]) = sum;
            }
        }
    }
}

static float softplus(float x) {
    return x > 20.0f ? x : log1pf(expf(x));
}

// per sequence s (state row ids[s]) and token t, for head h, dim i, state j (group g = h / (n_head / n_group)):
//   dt' = softplus(dt[h]);  state[j] = state[j] * exp(dt' * A) + B[j, g] * x[i, h] * dt'
//   y[i, h] = sum_j state[j] * C[j, g]
// A is A[h] (Mamba-2, one decay per head) or A[j, h] (Mamba-1). The final states follow y in dst.
static void ssm_scan(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * s0t = dst->src[0];
    const struct ggml_tensor * x   = dst->src[1];
    const struct ggml_tensor * dtt = dst->src[2];
    const struct ggml_tensor * At  = dst->src[3];
    const struct ggml_tensor * Bt  = dst->src[4];
    const struct ggml_tensor * Ct  = dst->src[5];
    const struct ggml_tensor * idt = dst->src[6];

    const int64_t nc = s0t->ne[0]; // d_state
    const int64_t nr = s0t->ne[1]; // head_dim
    const int64_t nh = x->ne[1];
    const int64_t ng = Bt->ne[1];
    const int64_t nt = x->ne[2];
    const int64_t ns = x->ne[3];
    const bool mamba2 = At->ne[0] == 1;
    const float * A = (const float *) At->data;
    const size_t state_bytes = (size_t) (nc * nr * nh) * sizeof(float);
    char * states_out = (char *) dst->data + (size_t) ggml_nelements(x) * sizeof(float);

    int64_t h0, h1;
    ggml_cpu_split_rows(nh, params->ith, params->nth, &h0, &h1);
    for (int64_t is = 0; is < ns; is++) {
        const int32_t id = *(const int32_t *) ((const char *) idt->data + is * idt->nb[0]);
        float * s = (float *) (states_out + (size_t) is * state_bytes);
        if (id < 0 || id >= s0t->ne[3]) {
            continue; // no such state row (ggml_cpu_supports_op cannot see the ids)
        }
        const float * sp = (const float *) ((const char *) s0t->data + (size_t) id * s0t->nb[3]);
        for (int64_t t = 0; t < nt; t++) {
            const float * xr = (const float *) ((const char *) x->data + t * x->nb[2] + is * x->nb[3]);
            const float * dt = (const float *) ((const char *) dtt->data + t * dtt->nb[1] + is * dtt->nb[2]);
            const float * B  = (const float *) ((const char *) Bt->data + t * Bt->nb[2] + is * Bt->nb[3]);
            const float * C  = (const float *) ((const char *) Ct->data + t * Ct->nb[2] + is * Ct->nb[3]);
            float * y = (float *) dst->data + (is * nt + t) * nh * nr;
            for (int64_t h = h0; h < h1; h++) {
                const float dts = softplus(dt[h]);
                const float dA2 = mamba2 ? expf(dts * A[h]) : 0.0f;
                const int64_t g = h / (nh / ng);
                for (int64_t i = 0; i < nr; i++) {
                    const int64_t ii = i + h * nr;
                    const float x_dt = xr[ii] * dts;
                    float sum = 0.0f;
                    for (int64_t j = 0; j < nc; j++) {
                        const float dA = mamba2 ? dA2 : expf(dts * A[j + h * nc]);
                        const float st = sp[j + ii * nc] * dA + B[j + g * nc] * x_dt;
                        sum += st * C[j + g * nc];
                        s[j + ii * nc] = st;
                    }
                    y[ii] = sum;
                }
            }
            sp = s; // later tokens continue from the state just written
        }
    }
}

// The wkv-style ops: T tokens of n_seqs equal-length sequences, H heads of size S. The state of head h is an
// S x S matrix st[i][j] (row i, column j at h*S*S + i*S + j); the states of sequence q start at
// src_state + q*S*S*H and end in dst after the T*S*H outputs.
struct wkv_shape {
    int64_t T, H, S, n_seqs;
    float * out;    // [T][H*S]
    float * states; // [n_seqs][H][S][S]
};

static struct wkv_shape wkv_shape_of(struct ggml_tensor * dst, const struct ggml_tensor * tok, const struct ggml_tensor * state) {
    struct wkv_shape w;
    w.T      = tok->ne[2];
    w.H      = tok->ne[1];
    w.S      = tok->ne[0];
    w.n_seqs = state->ne[1];
    w.out    = (float *) dst->data;
    w.states = (float *) dst->data + w.T * w.H * w.S;
    return w;
}

// the state to read at token t (the input state at a sequence's first token) and the one to write
static void wkv_states(const struct wkv_shape * w, const struct ggml_tensor * state, int64_t t, int64_t h,
                       const float ** prev, float ** cur) {
    const int64_t per_seq = w->T / w->n_seqs;
    const size_t off = (size_t) ((t / per_seq) * w->H + h) * (size_t) (w->S * w->S);
    *cur  = w->states + off;
    *prev = (t % per_seq) ? *cur : (const float *) state->data + off;
}

// RWKV-6: out[t, h, j] = sum_i r[i] * (tf[h, i] * k[i] * v[j] + prev[i][j]);  cur[i][j] = prev[i][j] * td[i] + k[i] * v[j]
// GLA:    cur[i][j] = prev[i][j] * g[i] + k[i] * v[j];  out[t, h, j] = sum_i cur[i][j] * q[i] * scale
static void wkv6_gla(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const bool gla = dst->op == GGML_OP_GATED_LINEAR_ATTN;
    const struct ggml_tensor * state = dst->src[gla ? 4 : 5];
    const struct wkv_shape w = wkv_shape_of(dst, dst->src[1], state);
    const float * k  = (const float *) dst->src[0]->data;
    const float * v  = (const float *) dst->src[1]->data;
    const float * rq = (const float *) dst->src[2]->data;           // r (wkv6) or q (gla)
    const float * tf = gla ? NULL : (const float *) dst->src[3]->data;
    const float * dg = (const float *) dst->src[gla ? 3 : 4]->data; // td (wkv6) or g (gla)
    const float scale = gla ? ggml_get_op_params_f32(dst, 0) : 1.0f;
    const int64_t S = w.S;

    int64_t h0, h1;
    ggml_cpu_split_rows(w.H, params->ith, params->nth, &h0, &h1);
    for (int64_t t = 0; t < w.T; t++) {
        for (int64_t h = h0; h < h1; h++) {
            const float * prev;
            float * cur;
            wkv_states(&w, state, t, h, &prev, &cur);
            const int64_t base = (t * w.H + h) * S;
            float * out = w.out + base;
            memset(out, 0, sizeof(float) * (size_t) S);
            for (int64_t i = 0; i < S; i++) {
                const float kv_k = k[base + i];
                const float rqi  = rq[base + i] * scale;
                const float dgi  = dg[base + i];
                const float tfi  = gla ? 0.0f : tf[h * S + i];
                for (int64_t j = 0; j < S; j++) {
                    const float kv = kv_k * v[base + j];
                    const float p  = prev[i * S + j];
                    if (gla) {
                        const float c = p * dgi + kv;
                        out[j] += c * rqi;
                        cur[i * S + j] = c;
                    } else {
                        out[j] += (kv * tfi + p) * rqi;
                        cur[i * S + j] = p * dgi + kv;
                    }
                }
            }
        }
    }
}

// RWKV-7 (row i = value index): sa = sum_j a[j] * prev[i][j];
//   cur[i][j] = prev[i][j] * w[j] + v[i] * k[j] + sa * b[j];  out[t, h, i] = sum_j cur[i][j] * r[j]
static void wkv7(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * state = dst->src[6];
    const struct wkv_shape w = wkv_shape_of(dst, dst->src[1], state);
    const float * r  = (const float *) dst->src[0]->data;
    const float * wd = (const float *) dst->src[1]->data;
    const float * k  = (const float *) dst->src[2]->data;
    const float * v  = (const float *) dst->src[3]->data;
    const float * a  = (const float *) dst->src[4]->data;
    const float * b  = (const float *) dst->src[5]->data;
    const int64_t S = w.S;

    int64_t h0, h1;
    ggml_cpu_split_rows(w.H, params->ith, params->nth, &h0, &h1);
    for (int64_t t = 0; t < w.T; t++) {
        for (int64_t h = h0; h < h1; h++) {
            const float * prev;
            float * cur;
            wkv_states(&w, state, t, h, &prev, &cur);
            const int64_t base = (t * w.H + h) * S;
            for (int64_t i = 0; i < S; i++) {
                float sa = 0.0f;
                for (int64_t j = 0; j < S; j++) {
                    sa += a[base + j] * prev[i * S + j];
                }
                const float vi = v[base + i];
                float res = 0.0f;
                for (int64_t j = 0; j < S; j++) {
                    const float c = prev[i * S + j] * wd[base + j] + vi * k[base + j] + sa * b[base + j];
                    cur[i * S + j] = c;
                    res += c * r[base + j];
                }
                w.out[base + i] = res;
            }
        }
    }
}

void ggml_cpu_forward_recurrent(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_SSM_CONV:          ssm_conv(params, dst); break;
        case GGML_OP_SSM_SCAN:          ssm_scan(params, dst); break;
        case GGML_OP_RWKV_WKV6:
        case GGML_OP_GATED_LINEAR_ATTN: wkv6_gla(params, dst); break;
        case GGML_OP_RWKV_WKV7:         wkv7(params, dst); break;
        default: break;
    }
}
