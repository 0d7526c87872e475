// NORM (mean/variance), RMS_NORM and L2_NORM along rows. Squares are taken in float and summed in double, as
// ggml's CPU backend does (RMS_NORM and L2_NORM in eight partial sums, see there).

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
            // eight partial sums: one chain of dependent double additions took 2048 x 4 cycles per row, the
            // largest serial cost of a generated token outside the mat-vecs. In double the order changes the
            // sum by a few ulps at most, far below the float the mean is rounded to.
            double part[8] = { 0.0 };
            int64_t i = 0;
            for (; i + 8 <= ne00; i += 8) {
                for (int j = 0; j < 8; j++) {
                    part[j] += (double) (X(i + j) * X(i + j));
                }
            }
            for (; i < ne00; i++) {
                part[0] += (double) (X(i) * X(i));
            }
            const double sum = ((part[0] + part[4]) + (part[1] + part[5])) + ((part[2] + part[6]) + (part[3] + part[7]));
            float scale;
            if (dst->op == GGML_OP_RMS_NORM) {
                const float mean = (float) (sum / (double) ne00);
                scale = 1.0f / sqrtf(mean + eps);
            } else {
                scale = 1.0f / fmaxf(sqrtf((float) sum), eps);
            }
            for (i = 0; i < ne00; i++) {
                Y(i) = X(i) * scale;
            }
        }
#undef X
#undef Y
    }
}
