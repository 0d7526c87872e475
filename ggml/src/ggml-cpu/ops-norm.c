// NORM (mean/variance), RMS_NORM and L2_NORM along rows. Squares are taken in float and summed in double,
// the same rounding as ggml's CPU backend.

#include "ggml-cpu-impl.h"

#include <math.h>

void ggml_cpu_forward_norm(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    GGML_TENSOR_UNARY_OP_LOCALS
    const float eps = ggml_get_op_params_f32(dst, 0);

    const int64_t nr = ne1 * ne2 * ne3;
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % ne1, i2 = (r / ne1) % ne2, i3 = r / (ne1 * ne2);
        const char * s = (const char *) src0->data + i1 * nb01 + i2 * nb02 + i3 * nb03;
        char       * d = (char *) dst->data + i1 * nb1 + i2 * nb2 + i3 * nb3;
#define X(i) (*(const float *) (s + (i) * nb00))
#define Y(i) (*(float *) (d + (i) * nb0))
        if (dst->op == GGML_OP_NORM) {
            double sum = 0.0;
            for (int64_t i = 0; i < ne00; i++) {
                sum += (double) X(i);
            }
            const float mean = (float) (sum / (double) ne00);
            double sum2 = 0.0;
            for (int64_t i = 0; i < ne00; i++) {
                const float v = X(i) - mean;
                Y(i) = v;
                sum2 += (double) (v * v);
            }
            const float variance = (float) (sum2 / (double) ne00);
            const float scale = 1.0f / sqrtf(variance + eps);
            for (int64_t i = 0; i < ne00; i++) {
                Y(i) *= scale;
            }
        } else {
            double sum = 0.0;
            for (int64_t i = 0; i < ne00; i++) {
                sum += (double) (X(i) * X(i));
            }
            float scale;
            if (dst->op == GGML_OP_RMS_NORM) {
                const float mean = (float) (sum / (double) ne00);
                scale = 1.0f / sqrtf(mean + eps);
            } else {
                scale = 1.0f / fmaxf(sqrtf((float) sum), eps);
            }
            for (int64_t i = 0; i < ne00; i++) {
                Y(i) = X(i) * scale;
            }
        }
#undef X
#undef Y
    }
}
