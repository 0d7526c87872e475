// llama-server's internal state shared by its source files: the command-line parameters, the slots, the
// server context, and the functions one file offers the others. Not a public API.
//
// Threads: libmicrohttpd's pool answers HTTP (server-http.c, the server_handle_* functions); the main thread
// loads the model and then runs the inference loop, the only place that touches slots, the llama_context and
// the draft contexts. Handlers that need slot state post a task (server-queue.h) and wait for the result.
#pragma once

#include "server-errors.h"
#include "server-http.h"
#include "server-json.h"
#include "server-queue.h"
#include "server-task.h"

#include "chat-grammar.h"
#include "chat-parse.h"
#include "chat-template-jinja.h"
#include "common.h"
#include "llama.h"
#include "sampling.h"
#include "speculative.h"

#include <jansson.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// "b<build number>-<commit>", llama.cpp's build_info / system_fingerprint (server-utils.c)
const char * server_build_info(void);

//
// logging (server-utils.c; to move onto common/log.h once the programs share it)
//

extern int  server_log_verbosity;
extern bool server_log_disabled;

void server_log(const char * level, const char * fmt, ...) __attribute__((format(printf, 2, 3)));
// llama_log_set callback: errors and warnings, everything with -v, nothing with --log-disable
void server_llama_log_cb(enum ggml_log_level level, const char * text, void * ud);

#define SRV_INF(...) server_log("srv  ", __VA_ARGS__)
#define SRV_WRN(...) server_log("srv  W ", __VA_ARGS__)
#define SRV_ERR(...) server_log("srv  E ", __VA_ARGS__)

//
// parameters (server-params.c): common_params from common/arg.c's table (LLAMA_EXAMPLE_SERVER) plus the server's
// post-parse defaults (-np auto, --threads-http auto, -md alone = draft-simple)
//

// 0 = ok, 1 = printed help/version, -1 = error (message printed). p is always initialized (free it with
// common_params_free).
int  server_params_parse(int argc, char ** argv, struct common_params * p);

//
// server state
//

enum slot_state {
    SLOT_STATE_IDLE,
    SLOT_STATE_STARTED,
    SLOT_STATE_PROCESSING_PROMPT,
    SLOT_STATE_DONE_PROMPT,
    SLOT_STATE_GENERATING,
};

// one slot per sequence id (slot id == seq id); owned by the inference thread
struct server_slot {
    int id;
    int id_task;           // -1 when idle
    int n_ctx;             // context available to this slot
    enum slot_state state;
    struct server_slot_params params;
    bool    has_next_token;
    bool    has_new_line;
    int32_t n_remain;
    int32_t n_decoded;

    // the request being served
    struct server_task     * task;
    struct common_sampler  * smpl;
    char * grammar;             // the request's grammar (params.grammar points here); kept until the next launch
    json_t * grammar_triggers;  // its lazy grammar's triggers and preserved token ids, as /slots shows them
    json_t * preserved_tokens;  // (params.grammar_triggers / preserved_tokens point here); kept the same way
    bool  backend_sampling;     // smpl is registered with llama_set_sampler for this slot's sequence
    int   mode;                 // COMPL_MODE_*
    bool  cache_prompt;
    bool  return_tokens;
    llama_token * prompt;       // borrowed from task->tokens
    int   n_prompt;
    int   n_prompt_done;        // prompt tokens already in the KV cache (reused + evaluated)
    int   n_prompt_reused;
    llama_token * cache;        // the tokens in this slot's sequence, in position order
    int   n_cache, cap_cache;
    llama_token next_tok;       // sampled, not yet decoded
    int   i_batch;              // row of this slot's output in the current batch, -1 = none
    char * text;                // generated text (stop strings cut off)
    size_t n_text, cap_text, n_sent;
    json_t * gen_tokens;
    json_t * probs;
    const char * stop_type;
    char * stopping_word;
    bool    truncated;          // the context filled up: generation stopped there, or (--context-shift) shifted
    int64_t t_start_prompt, t_start_gen;
    double  t_prompt_ms, t_gen_ms;
    char    oai_id[40];
    int64_t created;
    // event streams with a begin/end protocol (Anthropic messages, OpenAI responses): what was announced
    bool    sse_begun;          // message_start / response.created sent
    bool    sse_text_begun;     // the text block (content_block_start / output_item.added) sent
    char    resp_id[48];        // OpenAI responses: the response's, its message item's and reasoning item's ids
    char    resp_msg_id[48];
    char    resp_rs_id[48];
    int     sse_next_block;     // Anthropic: the index the next content block gets
    int     sse_think_block;    // the thinking / text block's index (Responses: the reasoning item), -1 = not open
    int     sse_text_block;
    int   * sse_tool_blocks;    // per tool call: its block's index, -1 = not open yet
    size_t  n_sse_tool_blocks;

    // chat modes: the generated text parsed in the request's output format (server-chat-msg.c). chat_msg is the
    // last parse (streaming: what the client has been sent); tool calls without an id of their own get one,
    // the same on every parse
    bool    chat_parse;
    struct common_chat_syntax chat_syntax;
    struct common_chat_msg    chat_msg;
    char ** tool_call_ids;
    size_t  n_tool_call_ids;

    // speculative decoding (server-spec.c); spec == NULL: this slot does not speculate
    struct llama_context      * ctx_dft;   // the slot's own draft context (draft-simple), NULL otherwise
    struct common_speculative * spec;
    int32_t spec_n_max, spec_n_min;        // what spec was built with (per request, <= the server's n_max)
    float   spec_p_min;
    llama_token * draft;                   // this step's draft (room for the server's n_max)
    int     n_draft;                       // tokens of draft in the current batch (0 = none)
    int   * i_batch_dft;                   // batch rows of next_tok and the draft tokens: n_draft + 1
    llama_token * ids;                     // the tokens one step accepts (room for n_draft_max + 1)
    int32_t n_draft_total;                 // drafted tokens of this request (timings.draft_n)
    int32_t n_draft_accepted;
    int64_t t_last_used;                   // ggml_time_us() when the slot was last released (LRU choice)

    // LoRA (server-lora.c): the adapter scales of the request being served, which are also those its cached
    // KV was computed with (sc->n_lora of them)
    float * lora;
};

// counters in llama.cpp's /metrics; the *_bucket values restart on each /metrics read
struct server_metrics {
    int64_t  t_start;
    uint64_t n_prompt_tokens_processed_total;
    uint64_t t_prompt_processing_total;   // ms
    uint64_t n_tokens_predicted_total;
    uint64_t t_tokens_generation_total;   // ms
    uint64_t n_prompt_tokens_processed;   // bucket
    uint64_t t_prompt_processing;         // bucket, ms
    uint64_t n_tokens_predicted;          // bucket
    uint64_t t_tokens_generation;         // bucket, ms
    uint64_t n_decode_total;
    uint64_t n_busy_slots_total;
    uint64_t n_tokens_max;
};

// one --lora / --lora-scaled adapter, loaded at start-up (server-lora.c)
struct server_lora {
    struct llama_adapter_lora * ptr;  // owned by the model
    const char * path;                // the command line's (params.lora_adapters)
    char * task_name;                 // adapter.lora.task_name, "" when absent
    char * prompt_prefix;             // adapter.lora.prompt_prefix, "" when absent
};

struct server_context {
    struct common_params params;
    struct server_http * http;
    struct server_queue  queue;

    // set once before the HTTP gate opens, read-only afterwards
    struct llama_model * model;
    const struct llama_vocab * vocab;
    char * model_name;
    int    n_ctx;        // whole context
    int    n_ctx_slot;   // per slot
    char * chat_template; // name or template text used for /apply-template; NULL = llama.cpp's default
    bool   has_chat;     // llama_chat_apply_template is available and accepted the template
    struct common_chat_jinja * chat_jinja; // --jinja: the template in the Jinja interpreter; NULL = built-in only
    struct llama_model * model_dft; // -md, NULL without a draft model
    int32_t n_draft_max;  // tokens one step may draft per slot (0 = no speculative decoding)

    // inference thread only
    struct server_slot * slots;
    int n_slots;
    struct llama_context * ctx;
    struct llama_batch batch;
    int n_batch;
    struct server_task * deferred_head, * deferred_tail; // waiting for a free slot
    struct server_metrics metrics;
    float * lora_applied;      // the scales set on ctx now (valid once lora_applied_valid)
    bool    lora_applied_valid;
    int     lora_rr;           // the slot a step's adapter set is taken from first (turns round)

    // LoRA adapters: the list is fixed after load; the global scales (POST /lora-adapters) under lora_mtx
    struct server_lora * lora;
    int     n_lora;
    float * lora_scale;
    pthread_mutex_t lora_mtx;
    bool    lora_mtx_init;

    atomic_bool shutting_down;
};

// the response shape of a completion task; the last three all render a chat prompt (server_mode_is_chat)
enum {
    COMPL_MODE_NATIVE    = 0, // /completion, /infill
    COMPL_MODE_OAI_COMPL = 1, // /v1/completions
    COMPL_MODE_OAI_CHAT  = 2, // /v1/chat/completions
    COMPL_MODE_ANTHROPIC = 3, // /v1/messages (converted to a chat request)
    COMPL_MODE_OAI_RESP  = 4, // /v1/responses (converted to a chat request)
};
static inline bool server_mode_is_chat(int mode) {
    return mode == COMPL_MODE_OAI_CHAT || mode == COMPL_MODE_ANTHROPIC || mode == COMPL_MODE_OAI_RESP;
}

//
// helpers (server-utils.c)
//

void     server_res_err(struct server_http_res * res, const char * message, enum server_error_type type);
// value is consumed; out of memory answers 500
void     server_res_json(struct server_http_res * res, json_t * value);
// the body as a JSON object, or NULL after answering 400
json_t * server_parse_body(const struct server_http_req * req, struct server_http_res * res);
// the piece of a token with special tokens rendered (llama.cpp's common_token_to_piece(..., true));
// malloc'd, *len its length
char *   server_token_piece(const struct llama_vocab * vocab, llama_token tok, size_t * len);
// tokenize text[0..len); returns the count (>= 0) with *out malloc'd, or -1
int      server_tokenize_text(const struct llama_vocab * vocab, const char * text, size_t len, bool add_special,
                              bool parse_special, llama_token ** out);

struct server_token_vec {
    llama_token * data;
    size_t n;
    size_t cap;
};

bool server_tv_append(struct server_token_vec * v, const llama_token * t, size_t n);
// llama.cpp's tokenize_mixed: a string, or an array of strings and token ids (only the first element gets
// the special tokens). false with err set on a bad element.
bool server_tokenize_mixed(const struct llama_vocab * vocab, const json_t * content, bool add_special,
                           bool parse_special, struct server_token_vec * out, struct sj_err * err);
int64_t server_now_us(void);
// the name the API reports (malloc'd, NULL when out of memory): llama.cpp's rule, the lexicographically
// smallest of the comma-separated -a aliases, else the model file's base name
char *   server_model_name(const struct common_params * p);
// the -a aliases as a sorted JSON array of distinct strings ([] without -a)
json_t * server_model_aliases(const struct common_params * p);
// appends d[0..len) to the NUL-terminated growing string *s
bool server_sb_add(char ** s, size_t * n, size_t * cap, const char * d, size_t len);

//
// HTTP handlers (server-routes-*.c, server-embd.c): run on the HTTP threads, ud is the server_context
//

void server_handle_health(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_models(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_props(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_props_change(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_tokenize(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_detokenize(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_apply_template(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_slots(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_metrics(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_completion(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_oai_completion(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_oai_chat(const struct server_http_req * req, struct server_http_res * res, void * ud);
// POST /v1/messages and /v1/messages/count_tokens (server-routes-messages.c)
void server_handle_anthropic_messages(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_anthropic_count_tokens(const struct server_http_req * req, struct server_http_res * res, void * ud);
// POST /v1/responses (server-routes-responses.c)
void server_handle_oai_responses(const struct server_http_req * req, struct server_http_res * res, void * ud);
// POST /infill (server-infill.c)
void server_handle_infill(const struct server_http_req * req, struct server_http_res * res, void * ud);
// POST /rerank and its aliases (server-rerank.c)
void server_handle_rerank(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_embedding(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_oai_embeddings(const struct server_http_req * req, struct server_http_res * res, void * ud);
// GET / POST /lora-adapters (server-lora.c)
void server_handle_lora_adapters(const struct server_http_req * req, struct server_http_res * res, void * ud);
void server_handle_lora_adapters_set(const struct server_http_req * req, struct server_http_res * res, void * ud);
// POST /slots/{id_slot}?action=save|restore|erase (server-slot-actions.c)
void server_handle_slot_action(const struct server_http_req * req, struct server_http_res * res, void * ud);

// posts t to the inference thread and waits for it (the caller's reference is released): its result, with
// its status in *status; NULL (response set) when the server is shutting down. While waiting, a client of req
// (may be NULL) that went away cancels the task.
json_t * server_run_task(struct server_context * sc, struct server_task * t, int * status,
                         const struct server_http_req * req, struct server_http_res * res);
// server_run_task, then the result as the JSON response with the task's status
void     server_respond_task(struct server_context * sc, struct server_task * t, const struct server_http_req * req,
                             struct server_http_res * res);

// what the chat template decides about the output (llama.cpp's common_chat_params): the format the output is
// parsed in, whether the prompt left a thinking block open, whether tool calls are parsed, and the tool-call
// grammar the format imposes with its triggers, preserved tokens and extra stops (common/chat-grammar.h; owned,
// free with common_chat_grammar_free; grammar NULL for none)
struct server_chat_params {
    enum common_chat_format format;
    bool   thinking_forced_open;
    bool   parse_tool_calls;
    struct common_chat_grammar tool_grammar;
};

#ifdef LLAMA_SERVER_HAVE_CHAT
// the Jinja template for `tmpl` with the model's BOS/EOS (server-chat.c); NULL when `tmpl` is a built-in name or
// does not parse (a warning is logged)
struct common_chat_jinja * server_chat_jinja_init(const struct server_context * sc, const char * tmpl);
// the formatted prompt (malloc'd) or NULL with err set (server-chat.c). `body` (may be NULL) is the request:
// its "tools" and "chat_template_kwargs" reach a Jinja template.
char * server_apply_chat_template(const struct server_context * sc, const json_t * msgs, bool add_ass,
                                  const json_t * body, struct sj_err * err);
// the same, with llama.cpp's per-format prompt changes (the generic protocol's system text, the tool list for a
// template that does not show tools, a thinking block closed when thinking is off) and, cp not NULL, what they
// mean for the output (*cp initialized by this call; free cp->grammar)
char * server_apply_chat_template_params(const struct server_context * sc, const json_t * msgs, bool add_ass,
                                         const json_t * body, struct server_chat_params * cp, struct sj_err * err);
#endif

// a completion request (body consumed) in the given mode: validation, prompt (pre-tokenized: *pre_tokens taken
// over, else from "prompt" or, chat modes, "messages"), then the task is run or streamed (server-routes-completion.c)
void server_complete_body(struct server_context * sc, const struct server_http_req * req, struct server_http_res * res,
                          json_t * body, int mode, struct server_token_vec * pre_tokens);
#ifdef LLAMA_SERVER_HAVE_CHAT
// the prompt tokens of a chat request ("messages" through the template, BOS/EOS as the vocabulary adds them);
// false with err set
// false with err set; cp (may be NULL) as server_apply_chat_template_params
bool server_chat_prompt_tokens(const struct server_context * sc, const json_t * body, struct server_token_vec * out,
                               struct server_chat_params * cp, struct sj_err * err);
#endif

//
// inference thread: the chat output parsed (server-chat-msg.c)
//

// slot launch: the request's output syntax from the task's body (chat modes; others parse nothing)
void     server_chat_msg_launch(const struct server_context * sc, struct server_slot * s, const json_t * body);
void     server_chat_msg_release(struct server_slot * s);
// parses text[0..len) into s->chat_msg (ids given to new tool calls); diffs (may be NULL) receives what changed
// since the previous parse (free with common_chat_msg_diffs_free). false when out of memory.
bool     server_chat_msg_update(struct server_slot * s, size_t len, bool is_partial,
                                struct common_chat_msg_diff ** diffs, size_t * n_diffs);
// the end of the generation: the complete text parsed as llama.cpp does (partial unless it ended on EOS)
bool     server_chat_msg_final(struct server_slot * s, struct common_chat_msg_diff ** diffs, size_t * n_diffs);
// OpenAI's assistant message / one streamed delta
json_t * server_chat_msg_oai_json(const struct common_chat_msg * m);
json_t * server_chat_diff_oai_json(const struct common_chat_msg_diff * d);

// request fields -> slot params (server-routes-completion.c); the same pure read runs on the HTTP thread (to
// answer 400) and on the inference thread (after the hand-over), so the task carries the request JSON for them
bool server_read_slot_params(const struct server_context * sc, const json_t * body, int mode,
                             struct server_slot_params * p, struct sj_err * err);

// the request's grammar (server-grammar.c): "grammar", "json_schema" (converted) or, on /v1/chat/completions,
// "response_format"; without them the command line's --grammar / -j. Returns the GBNF text (malloc'd) or NULL for
// none; *ok false with err set (a 400) when a schema cannot be converted or the fields conflict.
// the response schema of a chat request as llama.cpp reads it: response_format's (json_object: its "schema",
// json_schema: its json_schema.schema; empty when absent) over json_schema; NULL for none. Borrowed from body,
// or empty
const json_t * server_response_schema(const json_t * body, json_t * empty);
char * server_read_grammar(const struct server_context * sc, const json_t * body, int mode, bool * ok,
                           struct sj_err * err);
// llama.cpp's answer (400, invalid_request_error) to a grammar its sampler cannot parse
#define SERVER_GRAMMAR_PARSE_ERROR "Failed to initialize samplers: failed to parse grammar"
// true when grammar (NULL / "" = none) builds a grammar sampler; else err = SERVER_GRAMMAR_PARSE_ERROR
bool   server_check_grammar(const struct server_context * sc, const char * grammar, struct sj_err * err);

// a lazy grammar's part of the request (llama.cpp's params_from_json_cmpl): "grammar_lazy" (ignored with a
// json_schema and no grammar), "grammar_triggers" ([{"type": 0 token / 1 word / 2 pattern / 3 pattern_full,
// "value": text, "token": id for type 0}]) and "preserved_tokens" (texts; those that are one token are kept).
// A word trigger that is one preserved token becomes a token trigger. All owned; free with
// server_grammar_lazy_free.
struct server_grammar_lazy {
    bool lazy;
    struct common_grammar_trigger * triggers;
    size_t n_triggers;
    llama_token * preserved;
    size_t n_preserved;
};
// false with err set (a 400) on a malformed field, a word trigger that is one token but not preserved, or a lazy
// grammar without triggers (llama.cpp's messages)
bool server_read_grammar_lazy(const struct server_context * sc, const json_t * body, struct server_grammar_lazy * out,
                              struct sj_err * err);
// the same from a chat request's format grammar (llama.cpp's oaicompat_chat_params_parse puts its grammar_lazy,
// grammar_triggers and preserved_tokens in place of the request's own); body gives json_schema / grammar
bool server_chat_grammar_lazy(const struct server_context * sc, const json_t * body,
                              const struct common_chat_grammar * g, struct server_grammar_lazy * out,
                              struct sj_err * err);
void server_grammar_lazy_free(struct server_grammar_lazy * g);
// the triggers as llama.cpp's /slots shows them: [{"type", "value"[, "token"]}]
json_t * server_grammar_triggers_json(const struct server_grammar_lazy * g);

// the per-request sampler (server-sampling.c): common_sampler from the request's fields and its lazy grammar
// (parsed on the HTTP thread); NULL on failure
struct common_sampler * server_sampler_init(const struct server_context * sc, const json_t * body,
                                            const struct server_slot_params * p,
                                            const struct server_grammar_lazy * lazy);

//
// inference thread: responses (server-response.c)
//

// "length" when the generation hit a limit, else "stop" (OpenAI's finish_reason)
const char * server_finish_reason(const struct server_slot * s);
json_t * server_timings_json(const struct server_slot * s);
json_t * server_usage_json(const struct server_slot * s);
json_t * server_oai_base(const struct server_context * sc, const struct server_slot * s, const char * object);
// the final (non-streamed) result in the request's shape
json_t * server_final_json(const struct server_context * sc, const struct server_slot * s);
// one "data: ..." event (chunk consumed); false when the client went away
bool     server_stream_send(struct server_slot * s, json_t * chunk);
// the end of a stream, after the last generated token, for every wire format: the text still held back, what
// the parse of the complete text adds (chat modes), the format's closing chunk(s) or events, and [DONE] where
// llama.cpp sends one (the OpenAI-shaped streams); false when the client went away
bool     server_stream_end(const struct server_context * sc, struct server_slot * s);
// one "event: name" / "data: ..." pair (data consumed); false when the client went away
bool     server_stream_send_event(struct server_slot * s, const char * name, json_t * data);

// Anthropic messages and OpenAI responses shapes (server-response-compat.c)
json_t * server_final_json_anthropic(const struct server_context * sc, const struct server_slot * s);
json_t * server_final_json_resp(const struct server_context * sc, const struct server_slot * s);
// a streamed step: the chat diffs as content-block / output-item events
bool     server_stream_partial_anthropic(const struct server_context * sc, struct server_slot * s,
                                         const struct common_chat_msg_diff * diffs, size_t n_diffs);
// the closing events after the final parse's changes (server_stream_end): every open block's stop,
// message_delta, message_stop / the finished items' done events, response.completed
bool     server_stream_close_anthropic(const struct server_context * sc, struct server_slot * s);
bool     server_stream_partial_resp(const struct server_context * sc, struct server_slot * s,
                                    const struct common_chat_msg_diff * diffs, size_t n_diffs);
bool     server_stream_close_resp(const struct server_context * sc, struct server_slot * s);
// a streamed partial: delta text (and, native, the tokens / probabilities of this step); toks/probs consumed
bool     server_stream_partial(const struct server_context * sc, struct server_slot * s, const char * d, size_t n,
                               json_t * toks, json_t * probs);
// answers the task with an error (a stream gets an error event and ends)
void     server_task_fail(struct server_task * t, const char * msg, enum server_error_type type);
// the token's log-probability and the top n_probs of output idx; NULL without full logits
json_t * server_probs_json(const struct server_context * sc, struct server_slot * s, llama_token tok, int idx);

//
// inference thread: slots and batching (server-slots.c)
//

bool server_slot_cache_push(struct server_slot * s, llama_token t);
void server_slot_release(struct server_context * sc, struct server_slot * s);
void server_slot_finish(struct server_context * sc, struct server_slot * s);
// one sampled token (its output row idx, for n_probs): text, stop conditions, streaming. The slot may be
// finished or released afterwards (state IDLE).
void server_slot_on_token(struct server_context * sc, struct server_slot * s, llama_token tok, int idx);
void server_queue_deferred(struct server_context * sc, struct server_task * t);
// assign waiting tasks to free slots, in arrival order
void server_assign_deferred(struct server_context * sc);
// one step: every generating slot's last token (and draft) plus prompt chunks up to n_batch, one llama_decode
void server_inference_step(struct server_context * sc);
bool server_any_busy(const struct server_context * sc);

//
// inference thread: speculative decoding (server-spec.c)
//

// loads the draft model (-md) and works out n_draft_max; false (logged) on failure. Before the target context
// is created: the target's output limits depend on n_draft_max.
bool server_spec_load(struct server_context * sc);
// per slot: draft context and common_speculative; false (logged) on failure
bool server_spec_init_slot(struct server_context * sc, struct server_slot * s);
void server_spec_free_slot(struct server_slot * s);
// at launch: apply the request's speculative.n_max / n_min / p_min (rebuilds the slot's drafter when they
// differ from what it was built with); false (logged) when that fails
bool server_spec_launch(struct server_context * sc, struct server_slot * s);
// drafts for a generating slot and adds next_tok + the draft to the batch; room = batch rows left
void server_spec_add_to_batch(struct server_context * sc, struct server_slot * s, int room);
// after the decode: samples and accepts the longest agreeing prefix, rolls the KV back past it, and hands
// each accepted token to server_slot_on_token
void server_spec_accept(struct server_context * sc, struct server_slot * s);

//
// inference thread: other tasks
//

//
// LoRA adapters (server-lora.c)
//

// loads the command line's adapters (scales: --lora-scaled, 0 with --lora-init-without-apply); false (logged)
bool server_lora_load(struct server_context * sc);
void server_lora_free(struct server_context * sc);
// the global scales into out[0..n_lora)
void server_lora_global(struct server_context * sc, float * out);
// a request's "lora" field: false with err set unless absent or an array
bool server_lora_check_field(const json_t * body, struct sj_err * err);
// the request's adapter scales into out[0..n_lora) (no field / [] = the global ones); false with err set
bool server_lora_from_request(struct server_context * sc, const json_t * body, float * out, struct sj_err * err);
bool server_lora_same(const struct server_context * sc, const float * a, const float * b);
// sets these scales on the context (no-op when already set); false (logged) on failure
bool server_lora_apply(struct server_context * sc, const float * scales);

void server_process_metrics_task(struct server_context * sc, struct server_task * t);
void server_process_embedding_task(struct server_context * sc, struct server_task * t);
// a SLOT_ACTION task on its slot; false (nothing done) while the slot is busy: the task waits in the deferred list
bool server_process_slot_action(struct server_context * sc, struct server_task * t);
