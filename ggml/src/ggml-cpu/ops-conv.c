// Convolution kernels: IM2COL, IM2COL_BACK, IM2COL_3D, CONV_TRANSPOSE_1D, CONV_TRANSPOSE_2D, CONV_2D (direct),
// CONV_3D (direct), CONV_2D_DW (depthwise, direct). Sources are read through their strides; results are
// written contiguous (CONV_2D_DW through the result's strides, which may be channels-first).
//
// Where llama.cpp multiplies in the kernel's type (an F16 kernel with F16 patches), the input values are
// rounded to F16 the same way, so the results match it to the accumulation order.

#include "ggml-cpu-impl.h"
#include "ggml-cpu-kernels.h"

#include <string.h>

static inline const char * at4(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (const char *) t->data + i0 * (int64_t) t->nb[0] + i1 * (int64_t) t->nb[1] + i2 * (int64_t) t->nb[2] +
           i3 * (int64_t) t->nb[3];
}

static inline float rd(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return ggml_cpu_get_elem_f(at4(t, i0, i1, i2, i3), t->type);
}

// a value as the kernel-typed multiplication sees it
static inline float as_kernel_type(float v, enum ggml_type kt) {
    return kt == GGML_TYPE_F16 ? GGML_FP16_TO_FP32(GGML_FP32_TO_FP16(v)) : v;
}

// ---- im2col ----------------------------------------------------------------------------------------------

// dst row (in, ioh, iow) = the IC*KH*KW input values under the kernel there (0 outside the image)
static void forward_im2col(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const int32_t * op = dst->op_params;
    const int32_t s0 = op[0], s1 = op[1], p0 = op[2], p1 = op[3], d0 = op[4], d1 = op[5];
    const bool is_2D = op[6] == 1;

    const int64_t N  = is_2D ? src1->ne[3] : src1->ne[2];
    const int64_t IC = is_2D ? src1->ne[2] : src1->ne[1];
    const int64_t IH = is_2D ? src1->ne[1] : 1;
    const int64_t IW = src1->ne[0];
    const int64_t KH = is_2D ? src0->ne[1] : 1;
    const int64_t KW = src0->ne[0];
    const int64_t OH = is_2D ? dst->ne[2] : 1;
    const int64_t OW = dst->ne[1];
    const int64_t KN = IC * KH * KW;

    const size_t nb_n = is_2D ? src1->nb[3] : src1->nb[2];
    const size_t nb_c = is_2D ? src1->nb[2] : src1->nb[1];
    const size_t nb_h = src1->nb[1]; // unused when 1D (IH = 1, iih = 0)
    const size_t ts   = ggml_type_size(dst->type);

    int64_t r0, r1;
    ggml_cpu_split_rows(N * OH * OW, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t in  = r / (OH * OW);
        const int64_t ioh = (r / OW) % OH;
        const int64_t iow = r % OW;
        char * drow = (char *) dst->data + r * KN * (int64_t) ts;
        for (int64_t iic = 0; iic < IC; iic++) {
            const char * plane = (const char *) src1->data + in * (int64_t) nb_n + iic * (int64_t) nb_c;
            for (int64_t ikh = 0; ikh < KH; ikh++) {
                const int64_t iih = ioh * s1 + ikh * d1 - p1;
                for (int64_t ikw = 0; ikw < KW; ikw++) {
                    const int64_t iiw = iow * s0 + ikw * d0 - p0;
                    float v = 0.0f;
                    if (iih >= 0 && iih < IH && iiw >= 0 && iiw < IW) {
                        v = ggml_cpu_get_elem_f(plane + (is_2D ? iih * (int64_t) nb_h : 0) + iiw * (int64_t) src1->nb[0], src1->type);
                    }
                    ggml_cpu_set_elem_f(drow + ((iic * KH + ikh) * KW + ikw) * (int64_t) ts, dst->type, v);
                }
            }
        }
    }
}

// dst (the im2col input shape) = the sum of the gradient entries each input element was copied to
static void forward_im2col_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * grad = dst->src[0];
    const struct ggml_tensor * kern = dst->src[1];
    const int32_t * op = dst->op_params;
    const int32_t s0 = op[0], s1 = op[1], p0 = op[2], p1 = op[3], d0 = op[4], d1 = op[5];
    const bool is_2D = op[6] == 1;

    const int64_t N  = is_2D ? dst->ne[3] : dst->ne[2];
    const int64_t IC = is_2D ? dst->ne[2] : dst->ne[1];
    const int64_t IH = is_2D ? dst->ne[1] : 1;
    const int64_t IW = dst->ne[0];
    const int64_t KH = is_2D ? kern->ne[1] : 1;
    const int64_t KW = kern->ne[0];
    const int64_t OH = is_2D ? grad->ne[2] : 1;
    const int64_t OW = grad->ne[1];
    const float * g  = (const float *) grad->data;

    int64_t r0, r1;
    ggml_cpu_split_rows(N * IC, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t in = r / IC, iic = r % IC;
        float * plane = (float *) dst->data + r * IH * IW;
        for (int64_t iih = 0; iih < IH; iih++) {
            for (int64_t iiw = 0; iiw < IW; iiw++) {
                float sum = 0.0f;
                for (int64_t ikh = 0; ikh < KH; ikh++) {
                    const int64_t th = iih + p1 - ikh * d1;
                    if (is_2D && th % s1 != 0) {
                        continue; // positions skipped by the stride were never copied
                    }
                    const int64_t ioh = is_2D ? th / s1 : 0;
                    for (int64_t ikw = 0; ikw < KW; ikw++) {
                        const int64_t tw = iiw + p0 - ikw * d0;
                        if (tw % s0 != 0) {
                            continue;
                        }
                        const int64_t iow = tw / s0;
                        if (iow < 0 || iow >= OW || ioh < 0 || ioh >= OH) {
                            continue;
                        }
                        sum += g[((in * OH + ioh) * OW + iow) * (IC * KH * KW) + (iic * KH + ikh) * KW + ikw];
                    }
                }
                plane[iih * IW + iiw] = sum;
            }
        }
    }
}

static void forward_im2col_3d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src0 = dst->src[0];
    const struct ggml_tensor * src1 = dst->src[1];
    const int32_t * op = dst->op_params;
    const int32_t s0 = op[0], s1 = op[1], s2 = op[2], p0 = op[3], p1 = op[4], p2 = op[5];
    const int32_t d0 = op[6], d1 = op[7], d2 = op[8], IC = op[9];

    const int64_t N  = src1->ne[3] / IC;
    const int64_t ID = src1->ne[2], IH = src1->ne[1], IW = src1->ne[0];
    const int64_t KD = src0->ne[2], KH = src0->ne[1], KW = src0->ne[0];
    const int64_t OD = dst->ne[3] / N, OH = dst->ne[2], OW = dst->ne[1];
    const int64_t KN = IC * KD * KH * KW;
    const size_t  ts = ggml_type_size(dst->type);

    int64_t r0, r1;
    ggml_cpu_split_rows(N * OD * OH * OW, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t in  = r / (OD * OH * OW);
        const int64_t iod = (r / (OH * OW)) % OD;
        const int64_t ioh = (r / OW) % OH;
        const int64_t iow = r % OW;
        char * drow = (char *) dst->data + r * KN * (int64_t) ts;
        for (int64_t iic = 0; iic < IC; iic++) {
            for (int64_t ikd = 0; ikd < KD; ikd++) {
                const int64_t iid = iod * s2 + ikd * d2 - p2;
                for (int64_t ikh = 0; ikh < KH; ikh++) {
                    const int64_t iih = ioh * s1 + ikh * d1 - p1;
                    for (int64_t ikw = 0; ikw < KW; ikw++) {
                        const int64_t iiw = iow * s0 + ikw * d0 - p0;
                        float v = 0.0f;
                        if (iid >= 0 && iid < ID && iih >= 0 && iih < IH && iiw >= 0 && iiw < IW) {
                            v = rd(src1, iiw, iih, iid, in * IC + iic);
                        }
                        ggml_cpu_set_elem_f(drow + (((iic * KD + ikd) * KH + ikh) * KW + ikw) * (int64_t) ts, dst->type, v);
                    }
                }
            }
        }
    }
}

// ---- direct convolutions: one patch (im2col row) per output position, dotted with each kernel row ---------

struct conv_geom {
    int64_t KW, KH, KD, IC, OC;   // kernel
    int64_t IW, IH, ID;           // input
    int64_t OW, OH, OD, N;        // output
    int32_t s[3], p[3], d[3];     // stride / padding / dilation per axis (x, y, z)
    bool    is_3d;                // input channel / batch index = n*IC + ic (3D) or (ic, n) dims 2 and 3 (2D)
};

static void conv_direct(const struct ggml_compute_params * params, struct ggml_tensor * dst, const struct conv_geom * g) {
    const struct ggml_tensor * kern = dst->src[0];
    const struct ggml_tensor * src  = dst->src[1];
    const enum ggml_type kt = kern->type;
    const size_t  ts = ggml_type_size(kt);
    const int64_t KN = g->IC * g->KD * g->KH * g->KW;
    const struct ggml_cpu_type_kernels * k = ggml_cpu_get_kernels(kt);

    char * patch = (char *) params->wdata + (size_t) params->ith * GGML_PAD(KN * ts, GGML_CPU_CACHE_LINE);

    int64_t r0, r1;
    ggml_cpu_split_rows(g->N * g->OD * g->OH * g->OW, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t n  = r / (g->OD * g->OH * g->OW);
        const int64_t oz = (r / (g->OH * g->OW)) % g->OD;
        const int64_t oy = (r / g->OW) % g->OH;
        const int64_t ox = r % g->OW;
        for (int64_t ic = 0; ic < g->IC; ic++) {
            for (int64_t kz = 0; kz < g->KD; kz++) {
                const int64_t sz = oz * g->s[2] + kz * g->d[2] - g->p[2];
                for (int64_t ky = 0; ky < g->KH; ky++) {
                    const int64_t sy = oy * g->s[1] + ky * g->d[1] - g->p[1];
                    for (int64_t kx = 0; kx < g->KW; kx++) {
                        const int64_t sx = ox * g->s[0] + kx * g->d[0] - g->p[0];
                        float v = 0.0f;
                        if (sz >= 0 && sz < g->ID && sy >= 0 && sy < g->IH && sx >= 0 && sx < g->IW) {
                            v = g->is_3d ? rd(src, sx, sy, sz, n * g->IC + ic) : rd(src, sx, sy, ic, n);
                        }
                        ggml_cpu_set_elem_f(patch + (((ic * g->KD + kz) * g->KH + ky) * g->KW + kx) * (int64_t) ts, kt, v);
                    }
                }
            }
        }
        for (int64_t oc = 0; oc < g->OC; oc++) {
            const char * krow = (const char *) kern->data + oc * KN * (int64_t) ts; // the kernel is contiguous
            float sum = 0.0f;
            k->vec_dot((int) KN, &sum, krow, patch);
            char * out = g->is_3d ? (char *) at4(dst, ox, oy, oz, n * g->OC + oc) : (char *) at4(dst, ox, oy, oc, n);
            ggml_cpu_set_elem_f(out, dst->type, sum);
        }
    }
}

static void forward_conv_2d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * kern = dst->src[0];
    const struct ggml_tensor * src  = dst->src[1];
    const int32_t * op = dst->op_params;
    const struct conv_geom g = {
        .KW = kern->ne[0], .KH = kern->ne[1], .KD = 1, .IC = kern->ne[2], .OC = kern->ne[3],
        .IW = src->ne[0], .IH = src->ne[1], .ID = 1,
        .OW = dst->ne[0], .OH = dst->ne[1], .OD = 1, .N = dst->ne[3],
        .s = { op[0], op[1], 1 }, .p = { op[2], op[3], 0 }, .d = { op[4], op[5], 1 },
        .is_3d = false,
    };
    conv_direct(params, dst, &g);
}

static void forward_conv_3d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * kern = dst->src[0];
    const struct ggml_tensor * src  = dst->src[1];
    const int32_t * op = dst->op_params;
    const struct conv_geom g = {
        .KW = kern->ne[0], .KH = kern->ne[1], .KD = kern->ne[2], .IC = op[9], .OC = op[11],
        .IW = src->ne[0], .IH = src->ne[1], .ID = src->ne[2],
        .OW = dst->ne[0], .OH = dst->ne[1], .OD = dst->ne[2], .N = op[10],
        .s = { op[0], op[1], op[2] }, .p = { op[3], op[4], op[5] }, .d = { op[6], op[7], op[8] },
        .is_3d = true,
    };
    conv_direct(params, dst, &g);
}

size_t ggml_cpu_conv_work_size(const struct ggml_tensor * node, int n_threads) {
    const struct ggml_tensor * kern = node->src[0];
    int64_t kn = 0;
    if (node->op == GGML_OP_CONV_2D) {
        kn = kern->ne[0] * kern->ne[1] * kern->ne[2];
    } else if (node->op == GGML_OP_CONV_3D) {
        kn = kern->ne[0] * kern->ne[1] * kern->ne[2] * node->op_params[9];
    } else {
        return 0;
    }
    return (size_t) n_threads * GGML_PAD((size_t) kn * ggml_type_size(kern->type), GGML_CPU_CACHE_LINE);
}

// ---- depthwise 2D ----------------------------------------------------------------------------------------

// kernel [KW, KH, 1, C]; each (channel, batch) plane is convolved with its channel's kernel
static void forward_conv_2d_dw(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * kern = dst->src[0];
    const struct ggml_tensor * src  = dst->src[1];
    const int32_t * op = dst->op_params;
    const int32_t sx0 = op[0], sy0 = op[1], px = op[2], py = op[3], dx = op[4], dy = op[5];
    const int64_t C = src->ne[2], N = src->ne[3];

    int64_t r0, r1;
    ggml_cpu_split_rows(C * N, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t c = r % C, n = r / C;
        for (int64_t oy = 0; oy < dst->ne[1]; oy++) {
            for (int64_t ox = 0; ox < dst->ne[0]; ox++) {
                float sum = 0.0f;
                for (int64_t ky = 0; ky < kern->ne[1]; ky++) {
                    const int64_t sy = oy * sy0 + ky * dy - py;
                    if (sy < 0 || sy >= src->ne[1]) {
                        continue;
                    }
                    for (int64_t kx = 0; kx < kern->ne[0]; kx++) {
                        const int64_t sx = ox * sx0 + kx * dx - px;
                        if (sx < 0 || sx >= src->ne[0]) {
                            continue;
                        }
                        sum += rd(kern, kx, ky, 0, c) * rd(src, sx, sy, c, n);
                    }
                }
                ggml_cpu_set_elem_f((char *) at4(dst, ox, oy, c, n), dst->type, sum);
            }
        }
    }
}

// ---- transposed convolutions -----------------------------------------------------------------------------

// kernel [K, OC, IC], input [L, IC] => [(L-1)*s0 + K, OC]: every input position scatters a kernel-shaped
// contribution into the output; each thread owns whole output rows (channels)
static void forward_conv_transpose_1d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * kern = dst->src[0];
    const struct ggml_tensor * src  = dst->src[1];
    const int32_t s0 = dst->op_params[0];
    const int64_t K = kern->ne[0], OC = kern->ne[1], IC = kern->ne[2], L = src->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_rows(OC, params->ith, params->nth, &r0, &r1);
    for (int64_t oc = r0; oc < r1; oc++) {
        float * drow = (float *) ((char *) dst->data + oc * (int64_t) dst->nb[1]);
        memset(drow, 0, sizeof(float) * (size_t) dst->ne[0]);
        for (int64_t i = 0; i < L; i++) {
            for (int64_t k = 0; k < K; k++) {
                float v = 0.0f;
                for (int64_t ic = 0; ic < IC; ic++) {
                    v += rd(kern, k, oc, ic, 0) * as_kernel_type(rd(src, i, ic, 0, 0), kern->type);
                }
                drow[i * s0 + k] += v;
            }
        }
    }
}

// kernel [KW, KH, OC, IC], input [W, H, IC, N] => [(W-1)*s + KW, (H-1)*s + KH, OC, N]
static void forward_conv_transpose_2d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * kern = dst->src[0];
    const struct ggml_tensor * src  = dst->src[1];
    const int32_t stride = dst->op_params[0];
    const int64_t KW = kern->ne[0], KH = kern->ne[1], OC = kern->ne[2], IC = kern->ne[3];
    const int64_t W = src->ne[0], H = src->ne[1], N = src->ne[3];
    const int64_t OW = dst->ne[0];

    int64_t r0, r1;
    ggml_cpu_split_rows(OC * N, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t oc = r % OC, n = r / OC;
        float * plane = (float *) ((char *) dst->data + oc * (int64_t) dst->nb[2] + n * (int64_t) dst->nb[3]);
        memset(plane, 0, sizeof(float) * (size_t) (OW * dst->ne[1]));
        for (int64_t iy = 0; iy < H; iy++) {
            for (int64_t ix = 0; ix < W; ix++) {
                for (int64_t ky = 0; ky < KH; ky++) {
                    for (int64_t kx = 0; kx < KW; kx++) {
                        float v = 0.0f;
                        for (int64_t ic = 0; ic < IC; ic++) {
                            v += rd(kern, kx, ky, oc, ic) * as_kernel_type(rd(src, ix, iy, ic, n), kern->type);
                        }
                        plane[(iy * stride + ky) * OW + ix * stride + kx] += v;
                    }
                }
            }
        }
    }
}

void ggml_cpu_forward_conv(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_IM2COL:            forward_im2col(params, dst); break;
        case GGML_OP_IM2COL_BACK:       forward_im2col_back(params, dst); break;
        case GGML_OP_IM2COL_3D:         forward_im2col_3d(params, dst); break;
        case GGML_OP_CONV_2D:           forward_conv_2d(params, dst); break;
        case GGML_OP_CONV_3D:           forward_conv_3d(params, dst); break;
        case GGML_OP_CONV_2D_DW:        forward_conv_2d_dw(params, dst); break;
        case GGML_OP_CONV_TRANSPOSE_1D: forward_conv_transpose_1d(params, dst); break;
        case GGML_OP_CONV_TRANSPOSE_2D: forward_conv_transpose_2d(params, dst); break;
        default: break;
    }
}
