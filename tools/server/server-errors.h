// llama.cpp's error responses: {"error":{"code":N,"message":"...","type":"..."}} with the HTTP status in "code".
#pragma once

#include <jansson.h>

enum server_error_type {
    ERROR_TYPE_INVALID_REQUEST,     // 400 invalid_request_error
    ERROR_TYPE_AUTHENTICATION,      // 401 authentication_error
    ERROR_TYPE_SERVER,              // 500 server_error
    ERROR_TYPE_NOT_FOUND,           // 404 not_found_error
    ERROR_TYPE_PERMISSION,          // 403 permission_error
    ERROR_TYPE_UNAVAILABLE,         // 503 unavailable_error
    ERROR_TYPE_NOT_SUPPORTED,       // 501 not_supported_error
    ERROR_TYPE_EXCEED_CONTEXT_SIZE, // 400 exceed_context_size_error
};

// HTTP status of an error type
int          server_error_status(enum server_error_type type);
const char * server_error_type_name(enum server_error_type type);

// the inner object {"code","message","type"}; NULL only when out of memory.
// message may be any bytes: invalid UTF-8 is replaced so the JSON stays valid.
json_t * server_error_object(const char * message, enum server_error_type type);

// the full body {"error":{...}} as a malloc'd compact string; status_override > 0 replaces the type's
// status in "code" (413 has no type of its own in llama.cpp). *status receives the HTTP status.
char * server_error_body(const char * message, enum server_error_type type, int status_override, int * status);

// exceed_context_size_error carries the numbers that did not fit
char * server_error_body_exceed_context(int n_prompt_tokens, int n_ctx, int * status);
