#include <stdio.h>

int main(void) {
    fprintf(stderr, "pathd-bench: not built yet\n");
    return 1;
}
