// The conversation of llama.cpp's tests/test-chat-template.cpp (ggml-org/llama.cpp, main_automated_tests),
// shared by the built-in template test (test-chat-template.c) and the Jinja one (test-jinja-templates.c).
#pragma once

#include "llama.h"

static const struct llama_chat_message CONV[] = {
    { "system",    "You are a helpful assistant" },
    { "user",      "Hello" },
    { "assistant", "Hi there" },
    { "user",      "Who are you" },
    { "assistant", "   I am an assistant   " },
    { "user",      "Another question" },
};
#define N_CONV (sizeof(CONV) / sizeof(CONV[0]))

// test_cases[] "ibm-granite/granite-3.x (tool call)" .extra_conversation
static const struct llama_chat_message EXTRA_GRANITE_3[] = {
    { "user",                "What is the weather?" },
    { "assistant_tool_call", "[{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}]" },
    { "tool_response",       "{\"temperature\": 72}" },
};
// test_cases[] "ibm-granite/granite-4.0 (tool call)" / "granite-4.1" .extra_conversation
static const struct llama_chat_message EXTRA_GRANITE_4[] = {
    { "user",                "What is the weather?" },
    { "assistant_tool_call", "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"location\": \"NYC\"}}\n</tool_call>" },
    { "tool_response",       "{\"temperature\": 72}" },
};

// expected-prompt pieces and a template both tests use
#define GRANITE_BASE                                                                             \
    "<|start_of_role|>system<|end_of_role|>You are a helpful assistant<|end_of_text|>\n"         \
    "<|start_of_role|>user<|end_of_role|>Hello<|end_of_text|>\n"                                 \
    "<|start_of_role|>assistant<|end_of_role|>Hi there<|end_of_text|>\n"                         \
    "<|start_of_role|>user<|end_of_role|>Who are you<|end_of_text|>\n"                           \
    "<|start_of_role|>assistant<|end_of_role|>   I am an assistant   <|end_of_text|>\n"          \
    "<|start_of_role|>user<|end_of_role|>Another question<|end_of_text|>\n"

#define GRANITE_TOOL_TMPL                                                                                                    \
    "{%- for message in messages %}\n    {%- if message['role'] == 'assistant_tool_call' %}\n    {{- '<|start_of_role|>assistant<|end_of_role|><|tool_call|>' + message['content'] + '<|end_of_text|>\\n' }}\n    {%- else %}\n    {{- '<|start_of_role|>' + message['role'] + '<|end_of_role|>' + message['content'] + '<|end_of_text|>\\n' }}\n    {%- endif %}\n    {%- if loop.last and add_generation_prompt %}\n    {{- '<|start_of_role|>assistant<|end_of_role|>' }}\n    {%- endif %}\n{%- endfor %}"

#define PHI3_EXPECTED                                                                                                        \
    "<|system|>\nYou are a helpful assistant<|end|>\n<|user|>\nHello<|end|>\n<|assistant|>\nHi there<|end|>\n<|user|>\nWho are you<|end|>\n<|assistant|>\n   I am an assistant   <|end|>\n<|user|>\nAnother question<|end|>\n<|assistant|>\n"
