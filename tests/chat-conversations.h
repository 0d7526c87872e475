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
