// Image-style kernels: POOL_1D, POOL_2D, POOL_2D_BACK, UPSCALE (nearest, bilinear with optional align-corners
// or antialiasing, bicubic), PAD_REFLECT_1D, TIMESTEP_EMBEDDING, WIN_PART, WIN_UNPART, GET_REL_POS,
// ADD_REL_POS. Sources are read through their strides; results are contiguous (new tensors) unless in place.

#include "ggml-cpu-impl.h"

#include <float.h>
#include <string.h>

static inline const char * at4(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (const char *) t->data + i0 * (int64_t) t->nb[0] + i1 * (int64_t) t->nb[1] + i2 * (int64_t) t->nb[2] +
           i3 * (int64_t) t->nb[3];
}

static inline float rd(const struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return ggml_cpu_get_elem_f(at4(t, i0, i1, i2, i3), t->type);
}

static inline float * wr(struct ggml_tensor * t, int64_t i0, int64_t i1, int64_t i2, int64_t i3) {
    return (float *) at4(t, i0, i1, i2, i3);
}

// ---- pooling ---------------------------------------------------------------------------------------------

// 1D: the window [ow*s - p, ow*s - p + k) clipped to the row; AVG divides by the number of elements inside
static void forward_pool_1d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int32_t * op = dst->op_params;
    const enum ggml_op_pool kind = (enum ggml_op_pool) op[0];
    const int k = op[1], s = op[2], p = op[3];
    const int64_t IW = src->ne[0], OW = dst->ne[0];
    const int64_t nr = dst->ne[1] * dst->ne[2] * dst->ne[3];

    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        for (int64_t ow = 0; ow < OW; ow++) {
            float res = kind == GGML_OP_POOL_MAX ? -FLT_MAX : 0.0f;
            int count = 0;
            for (int ki = 0; ki < k; ki++) {
                const int64_t j = ow * s - p + ki;
                if (j < 0 || j >= IW) {
                    continue;
                }
                const float v = rd(src, j, i1, i2, i3);
                if (kind == GGML_OP_POOL_AVG) {
                    res += v;
                } else if (v > res) {
                    res = v;
                }
                count++;
            }
            if (kind == GGML_OP_POOL_AVG) {
                res = count > 0 ? res / (float) count : 0.0f;
            }
            *wr(dst, ow, i1, i2, i3) = res;
        }
    }
}

// 2D: the window clipped to the plane; AVG divides by the full window area k0*k1 (padding counts, as in llama.cpp)
static void forward_pool_2d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int32_t * op = dst->op_params;
    const enum ggml_op_pool kind = (enum ggml_op_pool) op[0];
    const int k0 = op[1], k1 = op[2], s0 = op[3], s1 = op[4], p0 = op[5], p1 = op[6];
    const int64_t np = dst->ne[2] * dst->ne[3];

    int64_t r0, r1;
    ggml_cpu_split_rows(np, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i2 = r % dst->ne[2], i3 = r / dst->ne[2];
        for (int64_t oy = 0; oy < dst->ne[1]; oy++) {
            for (int64_t ox = 0; ox < dst->ne[0]; ox++) {
                float res = kind == GGML_OP_POOL_MAX ? -FLT_MAX : 0.0f;
                for (int ky = 0; ky < k1; ky++) {
                    const int64_t iy = oy * s1 - p1 + ky;
                    if (iy < 0 || iy >= src->ne[1]) {
                        continue;
                    }
                    for (int kx = 0; kx < k0; kx++) {
                        const int64_t ix = ox * s0 - p0 + kx;
                        if (ix < 0 || ix >= src->ne[0]) {
                            continue;
                        }
                        const float v = rd(src, ix, iy, i2, i3);
                        if (kind == GGML_OP_POOL_AVG) {
                            res += v;
                        } else if (v > res) {
                            res = v;
                        }
                    }
                }
                if (kind == GGML_OP_POOL_AVG) {
                    res /= (float) (k0 * k1);
                }
                *wr(dst, ox, oy, i2, i3) = res;
            }
        }
    }
}

// gradient of POOL_2D: MAX sends each output gradient to the first largest input of its window, AVG spreads
// it over the window (divided by k0*k1)
static void forward_pool_2d_back(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * grad = dst->src[0];
    const struct ggml_tensor * af   = dst->src[1];
    const int32_t * op = dst->op_params;
    const enum ggml_op_pool kind = (enum ggml_op_pool) op[0];
    const int k0 = op[1], k1 = op[2], s0 = op[3], s1 = op[4], p0 = op[5], p1 = op[6];
    const int64_t W = dst->ne[0], H = dst->ne[1];

    int64_t r0, r1;
    ggml_cpu_split_rows(dst->ne[2] * dst->ne[3], params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i2 = r % dst->ne[2], i3 = r / dst->ne[2];
        for (int64_t y = 0; y < H; y++) {
            for (int64_t x = 0; x < W; x++) {
                *wr(dst, x, y, i2, i3) = 0.0f;
            }
        }
        for (int64_t oy = 0; oy < grad->ne[1]; oy++) {
            for (int64_t ox = 0; ox < grad->ne[0]; ox++) {
                const float g  = rd(grad, ox, oy, i2, i3);
                const int64_t bx = ox * s0 - p0, by = oy * s1 - p1;
                if (kind == GGML_OP_POOL_MAX) {
                    float best = -FLT_MAX;
                    int64_t mx = -1, my = -1;
                    for (int ky = 0; ky < k1; ky++) {
                        if (by + ky < 0 || by + ky >= H) {
                            continue;
                        }
                        for (int kx = 0; kx < k0; kx++) {
                            if (bx + kx < 0 || bx + kx >= W) {
                                continue;
                            }
                            const float v = rd(af, bx + kx, by + ky, i2, i3);
                            if (v > best) {
                                best = v;
                                mx = bx + kx;
                                my = by + ky;
                            }
                        }
                    }
                    if (mx >= 0) {
                        *wr(dst, mx, my, i2, i3) += g;
                    }
                } else {
                    const float ga = g / (float) (k0 * k1);
                    for (int ky = 0; ky < k1; ky++) {
                        if (by + ky < 0 || by + ky >= H) {
                            continue;
                        }
                        for (int kx = 0; kx < k0; kx++) {
                            if (bx + kx < 0 || bx + kx >= W) {
                                continue;
                            }
                            *wr(dst, bx + kx, by + ky, i2, i3) += ga;
                        }
                    }
                }
            }
        }
    }
}

// ---- upscale ---------------------------------------------------------------------------------------------

static inline int64_t clamp_i64(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : (v > hi ? hi : v); }
static inline float   clamp_f(float v, float lo, float hi) { return v < lo ? lo : (v > hi ? hi : v); }

// cubic convolution weights with a = -0.75 (PyTorch's choice): |t| <= 1 and 1 < |t| < 2
static inline float cubic_w1(float t) { const float a = -0.75f; return ((a + 2) * t - (a + 3)) * t * t + 1; }
static inline float cubic_w2(float t) { const float a = -0.75f; return ((a * t - 5 * a) * t + 8 * a) * t - 4 * a; }

static inline float cubic(float q0, float q1, float q2, float q3, float t) {
    return q0 * cubic_w2(t + 1) + q1 * cubic_w1(t) + q2 * cubic_w1(1 - t) + q3 * cubic_w2(2 - t);
}

static inline float tri_filter(float x) {
    const float v = 1.0f - fabsf(x);
    return v > 0.0f ? v : 0.0f;
}

// one output value of the 2D modes at source coordinates of plane (i02, i03)
struct upscale_ctx {
    const struct ggml_tensor * src;
    float sf0, sf1, pixel_offset;
};

static float upscale_bilinear(const struct upscale_ctx * u, int64_t i0, int64_t i1, int64_t i02, int64_t i03) {
    const int64_t ne00 = u->src->ne[0], ne01 = u->src->ne[1];
    const float y = ((float) i1 + u->pixel_offset) / u->sf1 - u->pixel_offset;
    const float x = ((float) i0 + u->pixel_offset) / u->sf0 - u->pixel_offset;
    const int64_t y0 = clamp_i64((int64_t) floorf(y), 0, ne01 - 1);
    const int64_t y1 = clamp_i64((int64_t) floorf(y) + 1, 0, ne01 - 1);
    const int64_t x0 = clamp_i64((int64_t) floorf(x), 0, ne00 - 1);
    const int64_t x1 = clamp_i64((int64_t) floorf(x) + 1, 0, ne00 - 1);
    // the fractions are taken from the clamped lower corner, then clamped to [0, 1] (llama.cpp)
    const float dy = clamp_f(y - (float) y0, 0.0f, 1.0f);
    const float dx = clamp_f(x - (float) x0, 0.0f, 1.0f);
    const float a = rd(u->src, x0, y0, i02, i03), b = rd(u->src, x1, y0, i02, i03);
    const float c = rd(u->src, x0, y1, i02, i03), d = rd(u->src, x1, y1, i02, i03);
    return a * (1 - dx) * (1 - dy) + b * dx * (1 - dy) + c * (1 - dx) * dy + d * dx * dy;
}

// bilinear with antialiasing (like PyTorch's antialias=True): a triangle filter widened by the downscale factor,
// normalized by the sum of its weights
static float upscale_bilinear_aa(const struct upscale_ctx * u, int64_t i0, int64_t i1, int64_t i02, int64_t i03) {
    const int64_t ne00 = u->src->ne[0], ne01 = u->src->ne[1];
    const float po = u->pixel_offset;
    const float support1 = fmaxf(1.0f, 1.0f / u->sf1), invscale1 = 1.0f / support1;
    const float support0 = fmaxf(1.0f, 1.0f / u->sf0), invscale0 = 1.0f / support0;
    const float y = ((float) i1 + po) / u->sf1;
    const float x = ((float) i0 + po) / u->sf0;
    int64_t x_min = (int64_t) (x - support0 + po), x_max = (int64_t) (x + support0 + po);
    int64_t y_min = (int64_t) (y - support1 + po), y_max = (int64_t) (y + support1 + po);
    x_min = x_min < 0 ? 0 : x_min;
    y_min = y_min < 0 ? 0 : y_min;
    x_max = x_max > ne00 ? ne00 : x_max;
    y_max = y_max > ne01 ? ne01 : y_max;
    float val = 0.0f, total = 0.0f;
    for (int64_t sy = y_min; sy < y_max; sy++) {
        const float wy = tri_filter(((float) sy - y + po) * invscale1);
        for (int64_t sx = x_min; sx < x_max; sx++) {
            const float w = tri_filter(((float) sx - x + po) * invscale0) * wy;
            if (w <= 0.0f) {
                continue;
            }
            val += rd(u->src, sx, sy, i02, i03) * w;
            total += w;
        }
    }
    return total > 0.0f ? val / total : val;
}

static float upscale_bicubic(const struct upscale_ctx * u, int64_t i0, int64_t i1, int64_t i02, int64_t i03) {
    const int64_t ne00 = u->src->ne[0], ne01 = u->src->ne[1];
    const float y = ((float) i1 + u->pixel_offset) / u->sf1 - u->pixel_offset;
    const float x = ((float) i0 + u->pixel_offset) / u->sf0 - u->pixel_offset;
    const int64_t y0 = (int64_t) floorf(y), x0 = (int64_t) floorf(x);
    const float dy = y - (float) y0, dx = x - (float) x0;
    float rows[4];
    for (int j = 0; j < 4; j++) {
        const int64_t yy = clamp_i64(y0 + j - 1, 0, ne01 - 1);
        float q[4];
        for (int i = 0; i < 4; i++) {
            q[i] = rd(u->src, clamp_i64(x0 + i - 1, 0, ne00 - 1), yy, i02, i03);
        }
        rows[j] = cubic(q[0], q[1], q[2], q[3], dx);
    }
    return cubic(rows[0], rows[1], rows[2], rows[3], dy);
}

static void forward_upscale(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int32_t flags = dst->op_params[0];
    const enum ggml_scale_mode mode = (enum ggml_scale_mode) (flags & 0xFF);

    struct upscale_ctx u = { src, (float) dst->ne[0] / (float) src->ne[0], (float) dst->ne[1] / (float) src->ne[1], 0.5f };
    const float sf2 = (float) dst->ne[2] / (float) src->ne[2];
    const float sf3 = (float) dst->ne[3] / (float) src->ne[3];
    if (flags & GGML_SCALE_FLAG_ALIGN_CORNERS) {
        u.pixel_offset = 0.0f;
        if (dst->ne[0] > 1 && src->ne[0] > 1) {
            u.sf0 = (float) (dst->ne[0] - 1) / (float) (src->ne[0] - 1);
        }
        if (dst->ne[1] > 1 && src->ne[1] > 1) {
            u.sf1 = (float) (dst->ne[1] - 1) / (float) (src->ne[1] - 1);
        }
    }

    const int64_t nr = dst->ne[1] * dst->ne[2] * dst->ne[3];
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        // the outer dimensions (and all four for nearest) pick the source index i / sf, truncated
        const int64_t i02 = (int64_t) ((float) i2 / sf2);
        const int64_t i03 = (int64_t) ((float) i3 / sf3);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            float v;
            switch (mode) {
                case GGML_SCALE_MODE_NEAREST:
                    v = rd(src, (int64_t) ((float) i0 / u.sf0), (int64_t) ((float) i1 / u.sf1), i02, i03);
                    break;
                case GGML_SCALE_MODE_BILINEAR:
                    v = (flags & GGML_SCALE_FLAG_ANTIALIAS) ? upscale_bilinear_aa(&u, i0, i1, i02, i03)
                                                            : upscale_bilinear(&u, i0, i1, i02, i03);
                    break;
                case GGML_SCALE_MODE_BICUBIC:
                    v = upscale_bicubic(&u, i0, i1, i02, i03);
                    break;
                default:
                    v = 0.0f; // refused by supports_op
                    break;
            }
            *wr(dst, i0, i1, i2, i3) = v;
        }
    }
}

// ---- padding / embeddings --------------------------------------------------------------------------------

// [a, b, c, d] with p0 = p1 = 1 -> [b, a, b, c, d, c]
static void forward_pad_reflect_1d(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int p0 = dst->op_params[0];
    const int64_t n = src->ne[0];
    const int64_t nr = dst->ne[1] * dst->ne[2] * dst->ne[3];
    int64_t r0, r1;
    ggml_cpu_split_rows(nr, params->ith, params->nth, &r0, &r1);
    for (int64_t r = r0; r < r1; r++) {
        const int64_t i1 = r % dst->ne[1], i2 = (r / dst->ne[1]) % dst->ne[2], i3 = r / (dst->ne[1] * dst->ne[2]);
        for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
            int64_t j = i0 - p0;
            if (j < 0) {
                j = -j;
            } else if (j >= n) {
                j = 2 * (n - 1) - j;
            }
            *wr(dst, i0, i1, i2, i3) = rd(src, j, i1, i2, i3);
        }
    }
}

// row i: [cos(t*f_0) .. cos(t*f_{h-1}), sin(t*f_0) .. sin(t*f_{h-1}) (, 0 when dim is odd)], f_j = max_period^(-j/h)
static void forward_timestep_embedding(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int dim = dst->op_params[0];
    const int max_period = dst->op_params[1];
    const int half = dim / 2;
    int64_t r0, r1;
    ggml_cpu_split_rows(src->ne[0], params->ith, params->nth, &r0, &r1);
    for (int64_t i = r0; i < r1; i++) {
        const float t = rd(src, i, 0, 0, 0);
        float * row = (float *) ((char *) dst->data + i * (int64_t) dst->nb[1]);
        for (int64_t j = 0; j < half; j++) {
            const float freq = expf(-logf((float) max_period) * (float) j / (float) half);
            const float arg = t * freq;
            row[j]        = cosf(arg);
            row[j + half] = sinf(arg);
        }
        if (dim % 2 != 0) {
            row[2 * half] = 0.0f;
        }
    }
}

// ---- windows and relative positions ----------------------------------------------------------------------

// src [C, W, H, 1] -> dst [C, w, w, npx*npy]; window (px, py) is dst slice py*npx + px, zero past the edge
static void forward_win_part(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int32_t npx = dst->op_params[0];
    const int32_t w   = dst->op_params[2];
    int64_t r0, r1;
    ggml_cpu_split_rows(dst->ne[3], params->ith, params->nth, &r0, &r1);
    for (int64_t i3 = r0; i3 < r1; i3++) {
        const int64_t py = i3 / npx, px = i3 % npx;
        for (int64_t i2 = 0; i2 < dst->ne[2]; i2++) {
            for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
                const int64_t sy = py * w + i2, sx = px * w + i1;
                const bool in = sy < src->ne[2] && sx < src->ne[1];
                for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                    *wr(dst, i0, i1, i2, i3) = in ? rd(src, i0, sx, sy, 0) : 0.0f;
                }
            }
        }
    }
}

// src [C, w, w, n_windows] -> dst [C, w0, h0]
static void forward_win_unpart(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int32_t w = dst->op_params[0];
    const int64_t px  = (w - dst->ne[1] % w) % w;
    const int64_t npx = (px + dst->ne[1]) / w;
    int64_t r0, r1;
    ggml_cpu_split_rows(dst->ne[2], params->ith, params->nth, &r0, &r1);
    for (int64_t i2 = r0; i2 < r1; i2++) {
        for (int64_t i1 = 0; i1 < dst->ne[1]; i1++) {
            const int64_t win = (i2 / w) * npx + i1 / w;
            for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                *wr(dst, i0, i1, i2, 0) = rd(src, i0, i1 % w, i2 % w, win);
            }
        }
    }
}

// dst[:, k, q] = src[:, (kh - k - 1) + q]: the relative offset q - k shifted to a table index
static void forward_get_rel_pos(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const int64_t kh = dst->ne[1];
    int64_t r0, r1;
    ggml_cpu_split_rows(dst->ne[2], params->ith, params->nth, &r0, &r1);
    for (int64_t i2 = r0; i2 < r1; i2++) {
        for (int64_t i1 = 0; i1 < kh; i1++) {
            const int64_t pos = (kh - i1 - 1) + i2;
            for (int64_t i0 = 0; i0 < dst->ne[0]; i0++) {
                memcpy((char *) at4(dst, i0, i1, i2, 0), at4(src, i0, pos, 0, 0), sizeof(ggml_fp16_t));
            }
        }
    }
}

// a viewed per (i11, i12, i13) as a W x W block (W = pw->ne[0]): block[y][x] += ph[y] + pw[x], where ph and pw
// are read at (i10 = y or x, i11, i12, i13)
static void forward_add_rel_pos(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    const struct ggml_tensor * src = dst->src[0];
    const struct ggml_tensor * pw  = dst->src[1];
    const struct ggml_tensor * ph  = dst->src[2];
    const bool inplace = dst->op_params[0] != 0;
    const int64_t W = pw->ne[0], ne11 = pw->ne[1], ne12 = pw->ne[2];
    const float * pwd = (const float *) pw->data;
    const float * phd = (const float *) ph->data;
    float * d = (float *) dst->data;
    const int64_t per_patch = W * W * ne11 * ne12; // elements of dst per i13 (= a's dim 2)

    int64_t r0, r1;
    ggml_cpu_split_rows(pw->ne[3], params->ith, params->nth, &r0, &r1);
    for (int64_t i13 = r0; i13 < r1; i13++) {
        if (!inplace && dst->data != src->data) {
            memcpy(d + i13 * per_patch, (const float *) src->data + i13 * per_patch, sizeof(float) * (size_t) per_patch);
        }
        for (int64_t i12 = 0; i12 < ne12; i12++) {
            for (int64_t i11 = 0; i11 < ne11; i11++) {
                const int64_t jp = ((i13 * ne12 + i12) * ne11 + i11) * W; // index of (0, i11, i12, i13) in pw / ph
                float * block = d + jp * W;
                for (int64_t y = 0; y < W; y++) {
                    for (int64_t x = 0; x < W; x++) {
                        block[y * W + x] = (block[y * W + x] + phd[jp + y]) + pwd[jp + x];
                    }
                }
            }
        }
    }
}

void ggml_cpu_forward_image(const struct ggml_compute_params * params, struct ggml_tensor * dst) {
    switch (dst->op) {
        case GGML_OP_POOL_1D:            forward_pool_1d(params, dst); break;
        case GGML_OP_POOL_2D:            forward_pool_2d(params, dst); break;
        case GGML_OP_POOL_2D_BACK:       forward_pool_2d_back(params, dst); break;
        case GGML_OP_UPSCALE:            forward_upscale(params, dst); break;
        case GGML_OP_PAD_REFLECT_1D:     forward_pad_reflect_1d(params, dst); break;
        case GGML_OP_TIMESTEP_EMBEDDING: forward_timestep_embedding(params, dst); break;
        case GGML_OP_WIN_PART:           forward_win_part(params, dst); break;
        case GGML_OP_WIN_UNPART:         forward_win_unpart(params, dst); break;
        case GGML_OP_GET_REL_POS:        forward_get_rel_pos(params, dst); break;
        case GGML_OP_ADD_REL_POS:        forward_add_rel_pos(params, dst); break;
        default: break;
    }
}
