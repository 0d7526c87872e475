// llama-cli's input side: reading one user message from a stream with llama.cpp's line rules, and the Ctrl+C
// state (first press stops a generation or leaves the prompt, a second one while the first is pending exits).
#pragma once

#include <stdbool.h>
#include <stdio.h>

// installs the SIGINT / SIGTERM handler (without SA_RESTART, so a blocked read returns and the flag is seen)
void cli_signals_install(void);
// whether Ctrl+C was pressed since the last cli_interrupt_clear
bool cli_interrupted(void);
void cli_interrupt_clear(void);

enum cli_read_status {
    CLI_READ_OK,          // *out holds the message (possibly empty)
    CLI_READ_EOF,         // end of input before anything was read
    CLI_READ_INTERRUPTED, // Ctrl+C while waiting
    CLI_READ_ERROR,       // out of memory
};

// Reads one message from `in` into *out (malloc'd, caller frees; NULL unless CLI_READ_OK). llama.cpp's simple-IO
// rules: a line ending in '\' flips "continue" for that line, a line ending in '/' ends the message; with
// multiline the default is to continue. Lines are joined with '\n'; the final newline is dropped.
// End of input after some text returns that text.
enum cli_read_status cli_read_message(FILE * in, bool multiline, char ** out);
