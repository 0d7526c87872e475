// ggml-opt datasets and results. A dataset is two host tensors (data, labels) cut into shards; batches are
// gathered shard by shard through a permutation, so shuffling moves indices, never the data itself. A
// result accumulates, per evaluated physical batch, the loss and the predictions, and the number of
// correct predictions; the mean loss and the accuracy come with their statistical uncertainties.

#include "ggml-opt-impl.h"

#include "ggml-alloc.h"
#include "ggml-backend.h"
#include "ggml-cpu.h"
#include "ggml-impl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct ggml_opt_dataset {
    struct ggml_context * ctx;
    ggml_backend_buffer_t buf;
    struct ggml_tensor  * data;   // [ne_datapoint, ndata]
    struct ggml_tensor  * labels; // [ne_label, ndata] or NULL

    int64_t ndata;
    int64_t ndata_shard;
    size_t  nbs_data;   // bytes of one shard of data
    size_t  nbs_labels; // bytes of one shard of labels

    int64_t * permutation; // [ndata / ndata_shard] shard order
    int64_t   nshards;
};

ggml_opt_dataset_t ggml_opt_dataset_init(enum ggml_type type_data, enum ggml_type type_label, int64_t ne_datapoint,
                                         int64_t ne_label, int64_t ndata, int64_t ndata_shard) {
    if (ne_datapoint <= 0 || ne_label < 0 || ndata <= 0 || ndata_shard <= 0 || ndata % ndata_shard != 0 ||
        type_data < 0 || type_data >= GGML_TYPE_COUNT || type_label < 0 || type_label >= GGML_TYPE_COUNT ||
        ne_datapoint % ggml_blck_size(type_data) != 0 || (ne_label > 0 && ne_label % ggml_blck_size(type_label) != 0)) {
        GGML_LOG_ERROR("%s: invalid dataset shape: ne_datapoint=%lld ne_label=%lld ndata=%lld ndata_shard=%lld "
                       "(need ne_datapoint > 0, ne_label >= 0, ndata > 0, ndata a multiple of ndata_shard > 0)\n",
                       __func__, (long long) ne_datapoint, (long long) ne_label, (long long) ndata, (long long) ndata_shard);
        return NULL;
    }

    ggml_opt_dataset_t ds = calloc(1, sizeof(*ds));
    if (ds == NULL) {
        return NULL;
    }
    ds->ndata       = ndata;
    ds->ndata_shard = ndata_shard;
    ds->nshards     = ndata / ndata_shard;

    struct ggml_init_params ip = { 2 * ggml_tensor_overhead(), NULL, true };
    ds->ctx = ggml_init(ip);
    if (ds->ctx == NULL) {
        free(ds);
        return NULL;
    }
    ds->data     = ggml_new_tensor_2d(ds->ctx, type_data, ne_datapoint, ndata);
    ds->nbs_data = ggml_nbytes(ds->data) / (size_t) ds->nshards;
    if (ne_label > 0) {
        ds->labels     = ggml_new_tensor_2d(ds->ctx, type_label, ne_label, ndata);
        ds->nbs_labels = ggml_nbytes(ds->labels) / (size_t) ds->nshards;
    }
    ds->buf         = ggml_backend_alloc_ctx_tensors_from_buft(ds->ctx, ggml_backend_cpu_buffer_type());
    ds->permutation = malloc((size_t) ds->nshards * sizeof(int64_t));
    if (ds->buf == NULL || ds->permutation == NULL) {
        GGML_LOG_ERROR("%s: out of memory for %lld datapoints\n", __func__, (long long) ndata);
        ggml_opt_dataset_free(ds);
        return NULL;
    }
    for (int64_t i = 0; i < ds->nshards; i++) {
        ds->permutation[i] = i;
    }
    return ds;
}

void ggml_opt_dataset_free(ggml_opt_dataset_t dataset) {
    if (dataset == NULL) {
        return;
    }
    if (dataset->buf) {
        ggml_backend_buffer_free(dataset->buf);
    }
    ggml_free(dataset->ctx);
    free(dataset->permutation);
    free(dataset);
}

int64_t              ggml_opt_dataset_ndata (ggml_opt_dataset_t dataset) { return dataset->ndata; }
struct ggml_tensor * ggml_opt_dataset_data  (ggml_opt_dataset_t dataset) { return dataset->data; }
struct ggml_tensor * ggml_opt_dataset_labels(ggml_opt_dataset_t dataset) { return dataset->labels; }

void ggml_opt_dataset_shuffle(ggml_opt_context_t opt_ctx, ggml_opt_dataset_t dataset, int64_t idata) {
    GGML_ASSERT(idata <= dataset->ndata);
    int64_t n = dataset->nshards;
    if (idata >= 0) {
        GGML_ASSERT(idata % dataset->ndata_shard == 0 && "shuffle: idata must be a multiple of the shard size");
        n = idata / dataset->ndata_shard;
    }
    // Fisher-Yates over the first n shards
    for (int64_t i = n - 1; i > 0; i--) {
        const int64_t j   = (int64_t) (ggml_opt_rng_next(opt_ctx) % (uint64_t) (i + 1));
        const int64_t tmp = dataset->permutation[i];
        dataset->permutation[i] = dataset->permutation[j];
        dataset->permutation[j] = tmp;
    }
}

// copies size bytes from host memory src into a batch at byte offset offs: a backend tensor, or host memory
static void write_batch(void * batch, bool host, size_t offs, const void * src, size_t size) {
    if (host) {
        memcpy((char *) batch + offs, src, size);
    } else {
        ggml_backend_tensor_set((struct ggml_tensor *) batch, src, offs, size);
    }
}

// the batch ibatch of nb_data_batch bytes of data, shard by shard through the permutation; nb_labels_batch is the
// size of the labels batch where known (0: not checked)
static void get_batch(ggml_opt_dataset_t dataset, void * data_batch, size_t nb_data_batch, void * labels_batch,
                      size_t nb_labels_batch, int64_t ibatch, bool host) {
    GGML_ASSERT((labels_batch == NULL) == (dataset->labels == NULL) && "labels batch given iff the dataset has labels");
    GGML_ASSERT(nb_data_batch % dataset->nbs_data == 0);
    const int64_t shards_per_batch = (int64_t) (nb_data_batch / dataset->nbs_data);
    GGML_ASSERT((nb_labels_batch == 0 || nb_labels_batch == (size_t) shards_per_batch * dataset->nbs_labels) &&
                "labels batch size does not match the data batch");
    GGML_ASSERT(ibatch >= 0 && (ibatch + 1) * shards_per_batch <= dataset->nshards && "batch index out of range");

    for (int64_t is = 0; is < shards_per_batch; is++) {
        const int64_t ishard = dataset->permutation[ibatch * shards_per_batch + is];
        write_batch(data_batch, host, (size_t) is * dataset->nbs_data,
                    (const char *) dataset->data->data + (size_t) ishard * dataset->nbs_data, dataset->nbs_data);
        if (labels_batch) {
            write_batch(labels_batch, host, (size_t) is * dataset->nbs_labels,
                        (const char *) dataset->labels->data + (size_t) ishard * dataset->nbs_labels, dataset->nbs_labels);
        }
    }
}

void ggml_opt_dataset_get_batch(ggml_opt_dataset_t dataset, struct ggml_tensor * data_batch, struct ggml_tensor * labels_batch,
                                int64_t ibatch) {
    GGML_ASSERT(data_batch && ggml_is_contiguous(data_batch));
    GGML_ASSERT(!labels_batch || ggml_is_contiguous(labels_batch));
    GGML_ASSERT(data_batch->type == dataset->data->type);
    GGML_ASSERT(!labels_batch || !dataset->labels || labels_batch->type == dataset->labels->type);
    get_batch(dataset, data_batch, ggml_nbytes(data_batch), labels_batch, labels_batch ? ggml_nbytes(labels_batch) : 0,
              ibatch, false);
}

void ggml_opt_dataset_get_batch_host(ggml_opt_dataset_t dataset, void * data_batch, size_t nb_data_batch, void * labels_batch,
                                     int64_t ibatch) {
    get_batch(dataset, data_batch, nb_data_batch, labels_batch, 0, ibatch, true);
}
