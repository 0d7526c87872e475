// The chat programs' renderer (common/chat-history, used by llama-cli and llama-completion -cnv) with --jinja on
// and off. Expected prompts are written out by hand from the templates below (no model: BOS/EOS are empty).
#include "harness.h"

#include "chat-history.h"
#include "chat-template-jinja.h"

#include <stdlib.h>
#include <string.h>

// a template only Jinja can render (the built-in detector knows no such markup)
static const char * CUSTOM =
    "{% for m in messages %}<<{{ m.role | upper }}>>{{ m.content }}{{ '\\n' }}{% endfor %}"
    "{% if add_generation_prompt %}<<ASSISTANT>>{% endif %}";

// raises on an assistant message; the built-in formatter (chatml here) takes over
static const char * RAISING =
    "{% for m in messages %}{% if m.role == 'assistant' %}{{ raise_exception('no assistant') }}{% endif %}"
    "[{{ m.content }}]{% endfor %}";

static void expect_str(char * got, const char * exp, const char * what) {
    TH_CHECK(got && strcmp(got, exp) == 0, "%s: expected [%s], got [%s]", what, exp, got ? got : "(null)");
    free(got);
}

int main(void) {
    char err[512];
    struct common_chat_history chat;

    // --jinja: a Jinja-only template renders, incrementally too
    TH_CHECK(common_chat_history_init(&chat, NULL, CUSTOM, true, err, sizeof(err)), "init custom: %s", err);
    TH_CHECK(chat.jinja != NULL, "custom template uses Jinja");
    common_chat_history_push(&chat, "system", "S");
    // the earlier rendering ends with '\n': llama.cpp's common_chat_format_single then starts with an extra "\n"
    expect_str(common_chat_history_add_and_format(&chat, "user", "hi", true), "\n<<USER>>hi\n<<ASSISTANT>>",
               "add_and_format user");
    common_chat_history_push(&chat, "assistant", "yo");
    expect_str(common_chat_history_format(&chat, false), "<<SYSTEM>>S\n<<USER>>hi\n<<ASSISTANT>>yo\n", "format");
    expect_str(common_chat_history_format_example(&chat),
               "<<SYSTEM>>You are a helpful assistant\n<<USER>>Hello\n<<ASSISTANT>>Hi there\n<<USER>>How are you?\n"
               "<<ASSISTANT>>",
               "format_example");
    common_chat_history_free(&chat);

    // --no-jinja: today's path, which cannot use this text
    TH_CHECK(!common_chat_history_init(&chat, NULL, CUSTOM, false, err, sizeof(err)), "no-jinja refuses custom");
    TH_CHECK(strstr(err, "not supported") != NULL, "no-jinja error: %s", err);

    // a built-in name stays built-in even with --jinja
    TH_CHECK(common_chat_history_init(&chat, NULL, "chatml", true, err, sizeof(err)), "init chatml: %s", err);
    TH_CHECK(chat.jinja == NULL, "a template name is not Jinja");
    common_chat_history_push(&chat, "user", "hi");
    expect_str(common_chat_history_format(&chat, true), "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n",
               "chatml by name");
    common_chat_history_free(&chat);

    // a failing Jinja rendering falls back to the built-in formatter (chatml for a text it does not know)
    TH_CHECK(common_chat_history_init(&chat, NULL, RAISING, true, err, sizeof(err)), "init raising: %s", err);
    common_chat_history_push(&chat, "user", "a");
    expect_str(common_chat_history_format(&chat, false), "[a]", "raising template, no assistant yet");
    common_chat_history_push(&chat, "assistant", "b");
    expect_str(common_chat_history_format(&chat, false), "<|im_start|>user\na<|im_end|>\n<|im_start|>assistant\nb<|im_end|>\n",
               "raising template falls back to chatml");
    common_chat_history_free(&chat);

    // a text that is not valid Jinja: with --jinja it is refused only if the built-in formatter cannot use it either
    TH_CHECK(!common_chat_history_init(&chat, NULL, "{% if %}", true, err, sizeof(err)), "broken template refused");

    // llama.cpp drops a leading BOS / trailing EOS the template writes when the vocabulary adds them
    struct common_chat_jinja * cj = common_chat_jinja_init("{{ bos_token }}{{ messages[0].content }}{{ eos_token }}",
                                                           "<s>", "</s>", err, sizeof(err));
    TH_CHECK(cj != NULL, "init bos template: %s", err);
    if (cj) {
        json_t * msgs = json_pack("[{s:s, s:s}]", "role", "user", "content", "x");
        expect_str(common_chat_jinja_apply(cj, msgs, NULL, true, NULL, err, sizeof(err)), "<s>x</s>", "bos kept");
        cj->strip_bos = cj->strip_eos = true;
        expect_str(common_chat_jinja_apply(cj, msgs, NULL, true, NULL, err, sizeof(err)), "x", "bos/eos stripped");
        json_decref(msgs);
        common_chat_jinja_free(cj);
    }
    return th_finish();
}
