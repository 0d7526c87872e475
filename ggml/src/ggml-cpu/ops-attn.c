// FLASH_ATTN_EXT: softmax(scale * q·kᵀ (+ softcap) + slope * mask) · v with an online softmax. A task is a
// block of FA_QB query rows of one head, so every K/V row is fetched (and V dequantized) once per block.
// q is converted to K's vec-dot format, so q·k uses the same integer/half kernels as mul_mat; the V
// accumulation is in F32.

#include "ggml-cpu-impl.h"
#include "ggml-cpu-kernels.h"

#include <math.h>
#include <string.h>

size_t ggml_cpu_fa_scratch_size(int64_t DK, int64_t DV, size_t q_row_size) {
    return FA_QB * GGML_PAD(q_row_size, GGML_CPU_CACHE_LINE) +
           GGML_PAD(sizeof(float) * (size_t) (FA_QB * DV + DV + DK), GGML_CPU_CACHE_LINE);
}

void ggml_cpu_forward_flash_attn_ext(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * q     = dst->src[0];
    const struct ggml_tensor * k     = dst->src[1];
    const struct ggml_tensor * v     = dst->src[2];
    const struct ggml_tensor * mask  = dst->src[3];
    const struct ggml_tensor * sinks = dst->src[4];

    const int64_t DK = q->ne[0];
    const int64_t DV = v->ne[0];
    const int64_t n_q = q->ne[1], n_head = q->ne[2], n_seq = q->ne[3];
    const int64_t n_kv = k->ne[1];
    const int64_t rk2 = n_head / k->ne[2];
    const int64_t rv2 = n_head / v->ne[2];
    const int64_t rk3 = n_seq / k->ne[3];
    const int64_t rv3 = n_seq / v->ne[3];

    float scale         = ggml_get_op_params_f32(dst, 0);
    const float max_bias      = ggml_get_op_params_f32(dst, 1);
    const float logit_softcap = ggml_get_op_params_f32(dst, 2);
    if (logit_softcap != 0.0f) {
        scale /= logit_softcap;
    }

    const struct ggml_cpu_type_kernels * kk = ggml_cpu_get_kernels(k->type);
    const enum ggml_type q_type = kk->vec_dot_type;
    const ggml_cpu_vec_dot_t kq_dot = kk->vec_dot;
    const size_t q_row_size = ggml_row_size(q_type, DK);
    const struct ggml_cpu_type_kernels * qk = ggml_cpu_get_kernels(q_type);

    // scratch per thread: FA_QB converted q rows, FA_QB accumulators, one dequantized V row, one q gather row
    const size_t q_conv_stride = GGML_PAD(q_row_size, GGML_CPU_CACHE_LINE);
    char  * scratch  = (char *) params->wdata + (size_t) params->ith * ggml_cpu_fa_scratch_size(DK, DV, q_row_size);
    char  * q_conv   = scratch;
    float * acc      = (float *) (scratch + FA_QB * q_conv_stride);
    float * v_tmp    = acc + FA_QB * DV;
    float * q_gather = v_tmp + DV;

    // tasks: blocks of FA_QB consecutive query rows of one head, so each K/V row is loaded once per block
    const int64_t n_qb = (n_q + FA_QB - 1) / FA_QB;
    const int64_t nr = n_qb * n_head * n_seq;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t qb  = r % n_qb;
        const int64_t iq2 = (r / n_qb) % n_head;
        const int64_t iq3 = r / (n_qb * n_head);
        const int64_t iq_begin = qb * FA_QB;
        const int64_t nq = n_q - iq_begin < FA_QB ? n_q - iq_begin : FA_QB;

        const float slope = ggml_cpu_alibi_slope(max_bias, iq2, n_head);
        const int64_t ik2 = iq2 / rk2, iv2 = iq2 / rv2;
        const int64_t ik3 = iq3 / rk3, iv3 = iq3 / rv3;

        float M[FA_QB];
        float S[FA_QB];
        const char * mrow[FA_QB];
        for (int64_t j = 0; j < nq; j++) {
            const int64_t iq1 = iq_begin + j;
            const char * qrow = (const char *) q->data + iq1 * q->nb[1] + iq2 * q->nb[2] + iq3 * q->nb[3];
            char * qc = q_conv + j * q_conv_stride;
            if (q_type == GGML_TYPE_F32) {
                for (int64_t i = 0; i < DK; i++) {
                    ((float *) qc)[i] = *(const float *) (qrow + i * q->nb[0]);
                }
            } else if (q->nb[0] == sizeof(float)) {
                qk->from_float((const float *) qrow, qc, DK);
            } else {
                for (int64_t i = 0; i < DK; i++) {
                    q_gather[i] = *(const float *) (qrow + i * q->nb[0]);
                }
                qk->from_float(q_gather, qc, DK);
            }
            mrow[j] = mask ? (const char *) mask->data + iq1 * mask->nb[1] + (iq2 % mask->ne[2]) * mask->nb[2] +
                                 (iq3 % mask->ne[3]) * mask->nb[3]
                           : NULL;
            M[j] = -INFINITY;
            S[j] = 0.0f;
            memset(acc + j * DV, 0, sizeof(float) * (size_t) DV);
        }

        for (int64_t ic = 0; ic < n_kv; ic++) {
            const char * krow = (const char *) k->data + ic * k->nb[1] + ik2 * k->nb[2] + ik3 * k->nb[3];
            const float * vf = NULL;
            for (int64_t j = 0; j < nq; j++) {
                const float mv = mrow[j] ? slope * ggml_cpu_get_elem_f(mrow[j] + ic * mask->nb[0], mask->type) : 0.0f;
                if (mv == -INFINITY) {
                    continue;
                }
                float s;
                kq_dot((int) DK, &s, krow, q_conv + j * q_conv_stride);
                s = s * scale;
                if (logit_softcap != 0.0f) {
                    s = logit_softcap * tanhf(s);
                }
                s += mv;

                float * a = acc + j * DV;
                float ms = 1.0f;
                float vs = 1.0f;
                if (s > M[j]) {
                    const float M_old = M[j];
                    M[j] = s;
                    ms = expf(M_old - s);
                    for (int64_t i = 0; i < DV; i++) {
                        a[i] *= ms;
                    }
                } else {
                    vs = expf(s - M[j]);
                }
                if (vf == NULL) {
                    const char * vrow = (const char *) v->data + ic * v->nb[1] + iv2 * v->nb[2] + iv3 * v->nb[3];
                    vf = ggml_cpu_row_to_float(vrow, v->type, v->nb[0], DV, v_tmp);
                }
                for (int64_t i = 0; i < DV; i++) {
                    a[i] += vf[i] * vs;
                }
                S[j] = S[j] * ms + vs;
            }
        }

        for (int64_t j = 0; j < nq; j++) {
            float * a = acc + j * DV;
            if (sinks) {
                const float s = ((const float *) sinks->data)[iq2];
                float ms = 1.0f;
                float vs = 1.0f;
                if (s > M[j]) {
                    ms = expf(M[j] - s);
                    for (int64_t i = 0; i < DV; i++) {
                        a[i] *= ms;
                    }
                } else {
                    vs = expf(s - M[j]);
                }
                S[j] = S[j] * ms + vs;
            }
            const float S_inv = S[j] == 0.0f ? 0.0f : 1.0f / S[j];
            float * d = (float *) ((char *) dst->data + iq3 * dst->nb[3] + (iq_begin + j) * dst->nb[2] + iq2 * dst->nb[1]);
            for (int64_t i = 0; i < DV; i++) {
                d[i] = a[i] * S_inv;
            }
        }
    }
}
