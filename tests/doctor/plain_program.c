/* A program to mark setuid: torchada-doctor PATH must report that the loader ignores LD_PRELOAD. */
int main(void) { return 0; }
