// The chat programs' input side (llama-cli, llama-completion -i/-cnv): reading one user message from a stream
// with llama.cpp's simple-IO line rules, and the Ctrl+C state (a first press is recorded for the program to act on:
// stop a generation or leave the prompt; a second one while the first is pending exits at once).
#pragma once

#include <stdbool.h>
#include <stdio.h>

// installs the SIGINT / SIGTERM handler (without SA_RESTART, so a blocked read returns and the flag is seen)
void common_console_signals_install(void);
// whether Ctrl+C was pressed since the last common_console_interrupt_clear
bool common_console_interrupted(void);
void common_console_interrupt_clear(void);

enum common_console_read_status {
    COMMON_CONSOLE_READ_OK,          // *out holds the message (possibly empty)
    COMMON_CONSOLE_READ_EOF,         // end of input before anything was read
    COMMON_CONSOLE_READ_INTERRUPTED, // Ctrl+C while waiting
    COMMON_CONSOLE_READ_ERROR,       // out of memory
};

// Reads one message from `in` into *out (malloc'd, caller frees; NULL unless COMMON_CONSOLE_READ_OK).
// llama.cpp's simple-IO rules: a line ending in '\' flips "continue" for that line, a line ending in '/' ends the
// message; with multiline the default is to continue. Lines are joined with '\n'; the final newline is dropped.
// End of input after some text returns that text.
enum common_console_read_status common_console_read_message(FILE * in, bool multiline, char ** out);
