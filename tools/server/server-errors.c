#include "server-errors.h"
#include "server-json.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int server_error_status(enum server_error_type type) {
    switch (type) {
        case ERROR_TYPE_INVALID_REQUEST:     return 400;
        case ERROR_TYPE_AUTHENTICATION:      return 401;
        case ERROR_TYPE_NOT_FOUND:           return 404;
        case ERROR_TYPE_PERMISSION:          return 403;
        case ERROR_TYPE_UNAVAILABLE:         return 503;
        case ERROR_TYPE_NOT_SUPPORTED:       return 501;
        case ERROR_TYPE_EXCEED_CONTEXT_SIZE: return 400;
        case ERROR_TYPE_SERVER:              return 500;
    }
    return 500;
}

const char * server_error_type_name(enum server_error_type type) {
    switch (type) {
        case ERROR_TYPE_INVALID_REQUEST:     return "invalid_request_error";
        case ERROR_TYPE_AUTHENTICATION:      return "authentication_error";
        case ERROR_TYPE_NOT_FOUND:           return "not_found_error";
        case ERROR_TYPE_PERMISSION:          return "permission_error";
        case ERROR_TYPE_UNAVAILABLE:         return "unavailable_error";
        case ERROR_TYPE_NOT_SUPPORTED:       return "not_supported_error";
        case ERROR_TYPE_EXCEED_CONTEXT_SIZE: return "exceed_context_size_error";
        case ERROR_TYPE_SERVER:              return "server_error";
    }
    return "server_error";
}

static json_t * error_object_code(const char * message, enum server_error_type type, int code) {
    json_t * obj = json_object();
    if (!obj) {
        return NULL;
    }
    json_object_set_new(obj, "code", json_integer(code));
    json_object_set_new(obj, "message", sj_string_lossy(message ? message : "", message ? strlen(message) : 0));
    json_object_set_new(obj, "type", json_string(server_error_type_name(type)));
    return obj;
}

json_t * server_error_object(const char * message, enum server_error_type type) {
    return error_object_code(message, type, server_error_status(type));
}

static char * wrap_error(json_t * inner, int code, int * status) {
    if (status) {
        *status = code;
    }
    json_t * root = json_object();
    char * out = NULL;
    if (root && inner) {
        json_object_set(root, "error", inner);
        out = sj_dumps(root);
    }
    json_decref(root);
    json_decref(inner);
    if (!out) {
        // out of memory: a constant body still tells the client what happened
        out = strdup("{\"error\":{\"code\":500,\"message\":\"out of memory\",\"type\":\"server_error\"}}");
        if (status) {
            *status = 500;
        }
    }
    return out;
}

char * server_error_body(const char * message, enum server_error_type type, int status_override, int * status) {
    const int code = status_override > 0 ? status_override : server_error_status(type);
    return wrap_error(error_object_code(message, type, code), code, status);
}

char * server_error_body_exceed_context(int n_prompt_tokens, int n_ctx, int * status) {
    char msg[256];
    snprintf(msg, sizeof(msg),
             "request (%d tokens) exceeds the available context size (%d tokens), try increasing it",
             n_prompt_tokens, n_ctx);
    json_t * inner = server_error_object(msg, ERROR_TYPE_EXCEED_CONTEXT_SIZE);
    if (inner) {
        json_object_set_new(inner, "n_prompt_tokens", json_integer(n_prompt_tokens));
        json_object_set_new(inner, "n_ctx", json_integer(n_ctx));
    }
    return wrap_error(inner, server_error_status(ERROR_TYPE_EXCEED_CONTEXT_SIZE), status);
}
