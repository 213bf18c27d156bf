// Test tool: runs a command with the pidfd_open system call (434) failing, as on kernels before 5.3
// (RHEL 8's 4.18), under seccomp profiles that deny it, or under valgrind. Issue 9.
// Usage: nopidfd [-e ERRNO] command args...     (default ERRNO: ENOSYS)
#include <errno.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <unistd.h>

enum { k_pidfd_open = 434 };

int main(int argc, char** argv)
{
  int error = ENOSYS;
  int first = 1;
  if (argc > 2 && strcmp(argv[1], "-e") == 0) {
    error = atoi(argv[2]);
    first = 3;
  }
  if (first >= argc) {
    fprintf(stderr, "usage: nopidfd [-e ERRNO] command args...\n");
    return 2;
  }
  struct sock_filter filter[] = {
    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, k_pidfd_open, 0, 1),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (error & SECCOMP_RET_DATA)),
    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
  };
  struct sock_fprog program = {sizeof filter / sizeof filter[0], filter};
  if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
      prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &program) != 0) {
    perror("nopidfd: seccomp");
    return 99;
  }
  execvp(argv[first], argv + first);
  perror("nopidfd: exec");
  return 98;
}
