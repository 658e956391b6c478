/* main.c -- pathd entry point (the HTTP server is being built; see issue 5). */
#include <stdio.h>

int main(void) {
    fprintf(stderr, "pathd: the HTTP server is not built yet\n");
    return 1;
}
