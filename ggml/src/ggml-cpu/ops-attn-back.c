// FLASH_ATTN_BACK: the gradients of attention O[:, n] = sum_m softmax_m(s)[m] v_m, s_m = scale * q_n . k_m
// (+ mask, or -inf where the causal mask hides key m), given d = dL/dO:
//   dp_m = d_n . v_m,  ds_m = p_m (dp_m - sum_j p_j dp_j),
//   dq_n = scale sum_m ds_m k_m,  dk_m += scale ds_m q_n,  dv_m += p_m d_n.
// One task per (kv head, sequence): it owns the dK / dV of that head and the dQ of the query heads that share
// it, so no two threads write the same element. Sums are kept in double (the op is for training, not speed).

#include "ggml-cpu-impl.h"

#include <math.h>
#include <string.h>

static double fab_get(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    const char * p = (const char *) t->data + i0 * t->nb[0] + i1 * t->nb[1] + i2 * t->nb[2] + i3 * t->nb[3];
    return t->type == GGML_TYPE_F16 ? (double) ggml_fp16_to_fp32(*(const ggml_fp16_t *) p) : (double) *(const float *) p;
}

bool ggml_cpu_flash_attn_back_supported(const struct ggml_tensor * op) {
    for (int i = 0; i < 4; i++) {
        if (op->src[i]->type != GGML_TYPE_F32 && op->src[i]->type != GGML_TYPE_F16) {
            return false;
        }
    }
    const struct ggml_tensor * mask = op->src[4];
    if (mask) {
        const struct ggml_tensor * q = op->src[0];
        if ((mask->type != GGML_TYPE_F32 && mask->type != GGML_TYPE_F16) || mask->ne[0] != op->src[1]->ne[1] ||
            mask->ne[1] < q->ne[1] || mask->ne[2] == 0 || mask->ne[3] == 0 || q->ne[2] % mask->ne[2] != 0 ||
            q->ne[3] % mask->ne[3] != 0) {
            return false;
        }
    }
    return op->type == GGML_TYPE_F32;
}

size_t ggml_cpu_flash_attn_back_work_size(const struct ggml_tensor * op, int n_threads) {
    // per thread: p and dp over the keys
    return (size_t) n_threads * GGML_PAD(2 * sizeof(double) * (size_t) op->src[1]->ne[1], GGML_CPU_CACHE_LINE);
}

void ggml_cpu_forward_flash_attn_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * q    = dst->src[0];
    const struct ggml_tensor * k    = dst->src[1];
    const struct ggml_tensor * v    = dst->src[2]; // [M, Dv, kvne2, ne3]
    const struct ggml_tensor * d    = dst->src[3];
    const struct ggml_tensor * mask = dst->src[4];
    const bool  masked = ggml_get_op_params_i32(dst, 0) != 0;
    const float scale  = ggml_get_op_params_f32(dst, 1);

    const int64_t D = q->ne[0], N = q->ne[1], H = q->ne[2], B = q->ne[3];
    const int64_t M = k->ne[1], Hkv = k->ne[2], Dv = v->ne[1];
    const int64_t rk = H / Hkv; // query heads per kv head
    const int64_t past = M - N; // causal mask: key m is visible to query n when m <= n + past

    const size_t ts = sizeof(float);
    float * dq = (float *) dst->data;
    float * dk = (float *) ((char *) dst->data + GGML_PAD((size_t) ggml_nelements(q) * ts, GGML_MEM_ALIGN));
    float * dv = (float *) ((char *) dk + GGML_PAD((size_t) ggml_nelements(k) * ts, GGML_MEM_ALIGN));

    double * p  = (double *) ((char *) params->wdata + (size_t) params->ith * GGML_PAD(2 * sizeof(double) * (size_t) M, GGML_CPU_CACHE_LINE));
    double * dp = p + M;

    for (int64_t task = params->ith; task < Hkv * B; task += params->nth) {
        const int64_t hk = task % Hkv, b = task / Hkv;
        float * dk_h = dk + D * M * (hk + Hkv * b);
        float * dv_h = dv + M * Dv * (hk + Hkv * b);
        memset(dk_h, 0, sizeof(float) * (size_t) (D * M));
        memset(dv_h, 0, sizeof(float) * (size_t) (M * Dv));

        for (int64_t h = hk * rk; h < (hk + 1) * rk; h++) {
            for (int64_t n = 0; n < N; n++) {
                // probabilities of the keys for query n
                double smax = -INFINITY;
                for (int64_t m = 0; m < M; m++) {
                    double s = -INFINITY;
                    if (!masked || m <= n + past) {
                        double dot = 0.0;
                        for (int64_t i = 0; i < D; i++) {
                            dot += fab_get(q, i, n, h, b) * fab_get(k, i, m, hk, b);
                        }
                        s = scale * dot;
                        if (mask) {
                            s += fab_get(mask, m, n, h % mask->ne[2], b % mask->ne[3]);
                        }
                    }
                    p[m] = s;
                    smax = s > smax ? s : smax;
                }
                double sum = 0.0;
                for (int64_t m = 0; m < M; m++) {
                    p[m] = smax == -INFINITY ? 0.0 : exp(p[m] - smax);
                    sum += p[m];
                }
                double pdp = 0.0;
                for (int64_t m = 0; m < M; m++) {
                    p[m] = sum > 0.0 ? p[m] / sum : 0.0;
                    double acc = 0.0;
                    for (int64_t j = 0; j < Dv; j++) {
                        acc += fab_get(d, j, n, h, b) * fab_get(v, m, j, hk, b);
                    }
                    dp[m] = acc;
                    pdp += p[m] * acc;
                }
                float * dq_n = dq + D * (n + N * (h + H * b));
                for (int64_t i = 0; i < D; i++) {
                    dq_n[i] = 0.0f;
                }
                for (int64_t m = 0; m < M; m++) {
                    if (p[m] == 0.0) {
                        continue;
                    }
                    const double ds = p[m] * (dp[m] - pdp) * scale;
                    for (int64_t i = 0; i < D; i++) {
                        dq_n[i]          += (float) (ds * fab_get(k, i, m, hk, b));
                        dk_h[i + D * m]  += (float) (ds * fab_get(q, i, n, h, b));
                    }
                    for (int64_t j = 0; j < Dv; j++) {
                        dv_h[m + M * j] += (float) (p[m] * fab_get(d, j, n, h, b));
                    }
                }
            }
        }
    }
}
