// nvfresh_trace: an LD_PRELOAD interposer that records what every process of one compile did to
// the file system. Loaded into nvcc and everything it runs (gcc, cc1plus, cudafe++, cicc, ptxas,
// fatbinary, as) when the launcher sets LD_PRELOAD and NVFRESH_TRACE_SOCKET (or NVFRESH_TRACE_FILE).
// Does nothing when neither is set.
//
// Each event is one line, sent as one datagram to the launcher's socket (NVFRESH_TRACE_SOCKET) or
// appended with one write(2) to a file opened with O_APPEND (NVFRESH_TRACE_FILE), so lines of
// concurrent processes never interleave. A line that cannot be delivered is reported as lost.
// The line grammar is written in lib/trace/trace_line.hpp; its words are trace_format.h's.
//
// Rules for every wrapper: call the real function first, keep its return value and errno, never
// allocate, and record nothing while already inside the tracer (reentrancy guard). The trace file
// (or socket) is opened anew for every event: a program that closes or dup2s over our descriptor
// can never make us write into one of its own files.
//
// Needs glibc: constructors receive argc/argv, and the legacy __xstat family is interposed for
// binaries built against glibc < 2.33 (the CUDA tools are).
#define _GNU_SOURCE
#include "trace/trace_format.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#define NVFRESH_EXPORT __attribute__((visibility("default")))

enum { k_line_max = 4096, k_pass_max = 64 };

static char g_trace_file[PATH_MAX];
static __thread int t_busy;

// ---- output -------------------------------------------------------------------------------------

static size_t append_text(char* buf, size_t used, const char* text)
{
  size_t len = strlen(text);
  if (used + len >= k_line_max) {
    return k_line_max;  // marks overflow
  }
  memcpy(buf + used, text, len);
  return used + len;
}

static size_t append_number(char* buf, size_t used, long value)
{
  char digits[24];
  int n = 0;
  unsigned long v = value < 0 ? (unsigned long)(-value) : (unsigned long)value;
  do {
    digits[n++] = (char)('0' + v % 10);
    v /= 10;
  } while (v != 0);
  char text[26];
  int t = 0;
  if (value < 0) {
    text[t++] = '-';
  }
  while (n > 0) {
    text[t++] = digits[--n];
  }
  text[t] = '\0';
  return append_text(buf, used, text);
}

// Where the lines go: NVFRESH_TRACE_SOCKET names a Unix datagram socket the launcher listens on
// ("@name" for the abstract namespace), so that tracing needs no disk space at all (a briefly
// full TMPDIR once lost lines silently); NVFRESH_TRACE_FILE names a file to append to (tests,
// benchmarks, debugging).
enum { k_mode_undecided = -1, k_mode_off = 0, k_mode_file = 1, k_mode_socket = 2 };
static int g_mode = k_mode_undecided;
static struct sockaddr_un g_socket_address;
static socklen_t g_socket_length;
static unsigned long g_lost;  // lines that could not be delivered and are not yet reported

enum { k_sent = 1, k_failed = 0, k_nobody_listens = -1 };

static int send_datagram(const char* line, size_t len)
{
  int fd = (int)syscall(SYS_socket, AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    return k_failed;
  }
  long sent;
  do {
    sent = syscall(SYS_sendto, fd, line, len, MSG_NOSIGNAL, &g_socket_address, g_socket_length);
  } while (sent < 0 && errno == EINTR);
  int error = errno;
  syscall(SYS_close, fd);
  if (sent == (long)len) {
    return k_sent;
  }
  // The launcher is gone (killed, or this process outlived the compile): nobody to tell.
  return sent < 0 && (error == ECONNREFUSED || error == ENOENT) ? k_nobody_listens : k_failed;
}

static int append_to_file(const char* line, size_t len)
{
  int fd = (int)syscall(SYS_openat, AT_FDCWD, g_trace_file,
                        O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return k_failed;
  }
  long written = syscall(SYS_write, fd, line, len);
  syscall(SYS_close, fd);
  return written == (long)len ? k_sent : k_failed;
}

static int deliver(const char* line, size_t len)
{
  return g_mode == k_mode_socket ? send_datagram(line, len) : append_to_file(line, len);
}

static size_t event_head(char* line, char letter);
static int runs_as_step_runner(void);

// A line that could not be delivered is counted, and the count goes out as a lost line ("L pid
// lost-<n>-events") with the next line that can be delivered, or when the process ends: the
// reader then knows the trace is incomplete.
static void report_lost(void)
{
  unsigned long lost = __atomic_load_n(&g_lost, __ATOMIC_RELAXED);
  if (lost == 0) {
    return;
  }
  char line[96];
  size_t used = event_head(line, NVFRESH_TRACE_LOST);
  used = append_text(line, used, NVFRESH_TRACE_LOST_EVENTS_PREFIX);
  used = append_number(line, used, (long)lost);
  used = append_text(line, used, NVFRESH_TRACE_LOST_EVENTS_SUFFIX);
  line[used] = '\n';
  if (deliver(line, used + 1) == k_sent) {
    __atomic_fetch_sub(&g_lost, lost, __ATOMIC_RELAXED);
  }
}

static void write_line(const char* line, size_t len)
{
  int saved = errno;
  report_lost();
  if (deliver(line, len) == k_failed) {
    __atomic_fetch_add(&g_lost, 1, __ATOMIC_RELAXED);
  }
  errno = saved;
}

// "@name" is the abstract address "\0name"; anything else a socket file's path.
static int set_socket_address(const char* name)
{
  size_t len = strlen(name);
  if (len == 0 || len >= sizeof g_socket_address.sun_path) {
    return 0;
  }
  memset(&g_socket_address, 0, sizeof g_socket_address);
  g_socket_address.sun_family = AF_UNIX;
  memcpy(g_socket_address.sun_path, name, len);
  if (name[0] == '@') {
    g_socket_address.sun_path[0] = '\0';
  }
  g_socket_length =
    (socklen_t)(offsetof(struct sockaddr_un, sun_path) + len + (name[0] == '@' ? 0 : 1));
  return 1;
}

static void decide_enabled(void)
{
  if (g_mode != k_mode_undecided) {
    return;
  }
  const char* socket_name = getenv("NVFRESH_TRACE_SOCKET");
  const char* path = getenv("NVFRESH_TRACE_FILE");
  if (socket_name != NULL && set_socket_address(socket_name)) {
    g_mode = k_mode_socket;
  } else if (path != NULL && path[0] != '\0' && strlen(path) < sizeof g_trace_file) {
    strcpy(g_trace_file, path);
    g_mode = k_mode_file;
  } else {
    g_mode = k_mode_off;
  }
  if (g_mode != k_mode_off && runs_as_step_runner()) {
    g_mode = k_mode_off;
  }
}

static size_t event_head(char* line, char letter)
{
  char head[3] = {letter, ' ', '\0'};
  size_t used = append_text(line, 0, head);
  used = append_number(line, used, (long)getpid());
  return append_text(line, used, " ");
}

// "<letter> <pid> <path>\n"; a path that does not fit or holds a newline becomes a lost line.
static void emit_path_event(char letter, const char* path)
{
  char line[k_line_max];
  size_t used = event_head(line, letter);
  used = append_text(line, used, path);
  if (used >= k_line_max - 1 || strchr(path, '\n') != NULL) {
    used = event_head(line, NVFRESH_TRACE_LOST);
    used = append_text(line, used, NVFRESH_TRACE_LOST_PATH);
  }
  line[used] = '\n';
  write_line(line, used + 1);
}

// ---- path resolution ----------------------------------------------------------------------------

// Makes path absolute against dirfd (AT_FDCWD: the cwd). Returns NULL when it cannot.
static const char* resolve(int dirfd, const char* path, char* out, size_t out_size)
{
  if (path == NULL) {
    return NULL;
  }
  if (path[0] == '/') {
    return path;
  }
  long len;
  if (dirfd == AT_FDCWD) {
    len = syscall(SYS_getcwd, out, out_size);
    len = len > 0 ? len - 1 : -1;  // the syscall counts the terminating NUL
  } else {
    char link[40] = "/proc/self/fd/";
    size_t used = append_number(link, strlen(link), dirfd);
    link[used] = '\0';
    len = syscall(SYS_readlinkat, AT_FDCWD, link, out, out_size - 1);
  }
  if (len <= 0 || out[0] != '/' || (size_t)len + strlen(path) + 2 > out_size) {
    return NULL;
  }
  out[len] = '/';
  strcpy(out + len + 1, path);
  return out;
}

static void record(char letter, int dirfd, const char* path)
{
  char buf[PATH_MAX * 2];
  const char* full = resolve(dirfd, path, buf, sizeof buf);
  if (full == NULL) {
    emit_path_event(NVFRESH_TRACE_LOST, NVFRESH_TRACE_LOST_UNRESOLVABLE);
    return;
  }
  emit_path_event(letter, full);
}

static int tracing(void)
{
  decide_enabled();
  return g_mode > k_mode_off && !t_busy;
}

static int lookup_failed(int saved_errno)
{
  return saved_errno == ENOENT || saved_errno == ENOTDIR;
}

static int raw_is_directory_fd(int fd)
{
  struct stat st;
  return syscall(SYS_fstat, fd, &st) == 0 && S_ISDIR(st.st_mode);
}

static char letter_for_mode(mode_t mode)
{
  return S_ISDIR(mode) ? NVFRESH_TRACE_DIRECTORY : NVFRESH_TRACE_READ;
}

// ---- process start ------------------------------------------------------------------------------

static int starts_with(const char* text, const char* prefix)
{
  return strncmp(text, prefix, strlen(prefix)) == 0;
}

static const char* base_name(const char* path)
{
  const char* slash = strrchr(path, '/');
  return slash ? slash + 1 : path;
}

// "-D__CUDA_ARCH__=900" as "900" ("-D" and the define may also be two words).
static const char* define_value(int argc, char** argv, int i, const char* name)
{
  const char* word = argv[i];
  if (strcmp(word, "-D") == 0 && i + 1 < argc) {
    word = argv[i + 1];
  } else if (starts_with(word, "-D")) {
    word += 2;
  } else {
    return NULL;
  }
  size_t len = strlen(name);
  if (strncmp(word, name, len) != 0 || (word[len] != '=' && word[len] != '\0')) {
    return NULL;
  }
  return word[len] == '=' ? word + len + 1 : "";
}

// A device preprocessing pass: "-E" with "-D__CUDA_ARCH__=<n>" (gcc and its cc1plus). 900 is
// compute_90; __CUDA_ARCH_SPECIFIC__ makes it compute_90a, __CUDA_ARCH_FAMILY_SPECIFIC__ _100f.
static int preprocess_arch(int argc, char** argv, char* pass, size_t size)
{
  int has_e = 0;
  const char* arch = NULL;
  const char* suffix = "";
  for (int i = 1; i < argc; ++i) {
    has_e |= strcmp(argv[i], "-E") == 0;
    arch = define_value(argc, argv, i, "__CUDA_ARCH__")
             ? define_value(argc, argv, i, "__CUDA_ARCH__")
             : arch;
    if (define_value(argc, argv, i, "__CUDA_ARCH_SPECIFIC__")) {
      suffix = "a";
    } else if (define_value(argc, argv, i, "__CUDA_ARCH_FAMILY_SPECIFIC__") && suffix[0] != 'a') {
      suffix = "f";
    }
  }
  size_t len = arch ? strlen(arch) : 0;
  if (!has_e || len < 2 || arch[len - 1] != '0' || len + 10 > size) {
    return 0;
  }
  strcpy(pass, "compute_");
  strncat(pass, arch, len - 1);
  strcat(pass, suffix);
  return 1;
}

// cicc "-arch compute_80", ptxas "-arch=sm_80" / "--gpu-name sm_80". nvcc's own -arch is not a pass,
// nor is that of a shell running an nvcc wrapper script (invoked as .../nvcc).
static int tool_arch(int argc, char** argv, const char* exe, const char* invoked, char* pass,
                     size_t size)
{
  if (strcmp(base_name(exe), "nvcc") == 0 ||
      (invoked != NULL && strcmp(base_name(invoked), "nvcc") == 0)) {
    return 0;
  }
  for (int i = 1; i < argc; ++i) {
    const char* value = NULL;
    if ((strcmp(argv[i], "-arch") == 0 || strcmp(argv[i], "--gpu-name") == 0) && i + 1 < argc) {
      value = argv[i + 1];
    } else if (starts_with(argv[i], "-arch=")) {
      value = argv[i] + strlen("-arch=");
    } else if (starts_with(argv[i], "--gpu-name=")) {
      value = argv[i] + strlen("--gpu-name=");
    }
    if (value != NULL && (starts_with(value, "compute_") || starts_with(value, "sm_")) &&
        strlen(value) < size) {
      strcpy(pass, value);
      return 1;
    }
  }
  return 0;
}

static void emit_process(int argc, char** argv)
{
  char exe[PATH_MAX];
  long len = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
  exe[len > 0 ? len : 0] = '\0';
  const char* execfn = (const char*)getauxval(AT_EXECFN);  // the path execve named
  char pass[k_pass_max] = NVFRESH_TRACE_NO_PASS;
  if (argv != NULL && !preprocess_arch(argc, argv, pass, sizeof pass)) {
    tool_arch(argc, argv, exe, execfn, pass, sizeof pass);
  }
  char line[k_line_max * 2];
  const char head[3] = {NVFRESH_TRACE_PROCESS, ' ', '\0'};
  size_t used = append_text(line, 0, head);
  used = append_number(line, used, (long)getpid());
  used = append_text(line, used, " ");
  used = append_number(line, used, (long)getppid());
  used = append_text(line, used, " ");
  used = append_text(line, used, pass);
  used = append_text(line, used, " ");
  size_t mark = used;
  used = append_text(line, used, exe);
  if (used >= k_line_max - 1) {
    used = append_text(line, mark, "?");
  }
  line[used++] = '\n';
  // A #! script (an nvcc wrapper such as /usr/local/bin/nvcc) runs its interpreter: /proc/self/exe
  // names the shell, AT_EXECFN the script that was executed. Same write, so it follows its X line.
  char invoked_buf[PATH_MAX * 2];
  const char* invoked = resolve(AT_FDCWD, execfn, invoked_buf, sizeof invoked_buf);
  if (invoked != NULL && strcmp(invoked, exe) != 0 && strchr(invoked, '\n') == NULL) {
    char* next = line + used;
    size_t added = append_text(next, event_head(next, NVFRESH_TRACE_INVOKED), invoked);
    if (added < k_line_max - 1) {  // else too long to name: the X line alone
      next[added] = '\n';
      used += added + 1;
    }
  }
  write_line(line, used);
}

// ---- process times ------------------------------------------------------------------------------

// When this image started (CLOCK_MONOTONIC: one clock for every process of the machine), and the
// pid it started in: a forked child runs our code too, but the image it has is its parent's, whose
// times are not its own (an exec in it gives it an image, and a constructor run, of its own).
static long g_start_ns;
static int g_start_pid;

static long monotonic_ns(void)
{
  struct timespec now;
  clock_gettime(CLOCK_MONOTONIC, &now);  // the vDSO: no allocation, no system call
  return (long)now.tv_sec * 1000000000L + now.tv_nsec;
}

// "T pid start_ns end_ns": this image ran from start to now. Sent when it exits and before it
// execs another program (a failed exec sends it again later; the reader keeps the last).
static void emit_times(void)
{
  if (g_start_ns == 0 || g_start_pid != (int)getpid()) {
    return;
  }
  char line[96];
  size_t used = event_head(line, NVFRESH_TRACE_TIMES);
  used = append_number(line, used, g_start_ns);
  used = append_text(line, used, " ");
  used = append_number(line, used, monotonic_ns());
  line[used] = '\n';
  write_line(line, used + 1);
}

__attribute__((constructor)) static void nvfresh_trace_start(int argc, char** argv, char** envp)
{
  (void)envp;
  int saved = errno;
  ++t_busy;
  decide_enabled();
  if (g_mode > k_mode_off) {
    g_start_ns = monotonic_ns();
    g_start_pid = (int)getpid();
    emit_process(argc, argv);
  }
  --t_busy;
  errno = saved;
}

__attribute__((destructor)) static void nvfresh_trace_end(void)
{
  if (g_mode > k_mode_off) {
    int saved = errno;
    emit_times();
    report_lost();
    errno = saved;
  }
}

// ---- the real functions -------------------------------------------------------------------------

// Looks the next definition up once; the legacy __xstat family exists only as versioned symbols.
static void* real_symbol(void** slot, const char* name)
{
  if (*slot == NULL) {
    ++t_busy;
    void* found = dlsym(RTLD_NEXT, name);
    if (found == NULL) {
      found = dlvsym(RTLD_NEXT, name, "GLIBC_2.2.5");
    }
    if (found == NULL) {
      found = dlvsym(RTLD_NEXT, name, "GLIBC_2.17");
    }
    *slot = found;
    --t_busy;
  }
  return *slot;
}

#define REAL(ret, name, ...)                                                                       \
  static void* s_##name;                                                                           \
  ret (*real_##name)(__VA_ARGS__) = (ret(*)(__VA_ARGS__))real_symbol(&s_##name, #name)

// ---- opens ----------------------------------------------------------------------------------------

static int open_mode_wanted(int flags)
{
  return (flags & O_CREAT) != 0 || (flags & __O_TMPFILE) == __O_TMPFILE;
}

static void after_open(int dirfd, const char* path, int flags, int result, int saved_errno)
{
  if (!tracing()) {
    errno = saved_errno;
    return;
  }
  ++t_busy;
  if (result < 0) {
    if (lookup_failed(saved_errno) && (flags & O_ACCMODE) == O_RDONLY && !(flags & O_CREAT)) {
      record(NVFRESH_TRACE_MISSING, dirfd, path);
    }
  } else if ((flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC)) != 0) {
    record(NVFRESH_TRACE_WRITE, dirfd, path);
  } else {
    record((flags & O_DIRECTORY) || raw_is_directory_fd(result) ? NVFRESH_TRACE_DIRECTORY
                                                                : NVFRESH_TRACE_READ,
           dirfd, path);
  }
  --t_busy;
  errno = saved_errno;
}

static mode_t mode_argument(int flags, va_list args)
{
  return open_mode_wanted(flags) ? (mode_t)va_arg(args, int) : 0;
}

#define DEFINE_OPEN(name)                                                                          \
  NVFRESH_EXPORT int name(const char* path, int flags, ...)                                        \
  {                                                                                                \
    va_list args;                                                                                  \
    va_start(args, flags);                                                                         \
    mode_t mode = mode_argument(flags, args);                                                      \
    va_end(args);                                                                                  \
    REAL(int, name, const char*, int, ...);                                                        \
    int result = real_##name(path, flags, mode);                                                   \
    after_open(AT_FDCWD, path, flags, result, errno);                                              \
    return result;                                                                                 \
  }

#define DEFINE_OPENAT(name)                                                                        \
  NVFRESH_EXPORT int name(int dirfd, const char* path, int flags, ...)                             \
  {                                                                                                \
    va_list args;                                                                                  \
    va_start(args, flags);                                                                         \
    mode_t mode = mode_argument(flags, args);                                                      \
    va_end(args);                                                                                  \
    REAL(int, name, int, const char*, int, ...);                                                   \
    int result = real_##name(dirfd, path, flags, mode);                                            \
    after_open(dirfd, path, flags, result, errno);                                                 \
    return result;                                                                                 \
  }

DEFINE_OPEN(open)
DEFINE_OPEN(open64)
DEFINE_OPENAT(openat)
DEFINE_OPENAT(openat64)

// The _FORTIFY_SOURCE entry points take no mode (they are only called without O_CREAT).
#define DEFINE_OPEN_2(name)                                                                        \
  NVFRESH_EXPORT int name(const char* path, int flags)                                             \
  {                                                                                                \
    REAL(int, name, const char*, int);                                                             \
    int result = real_##name(path, flags);                                                         \
    after_open(AT_FDCWD, path, flags, result, errno);                                              \
    return result;                                                                                 \
  }

#define DEFINE_OPENAT_2(name)                                                                      \
  NVFRESH_EXPORT int name(int dirfd, const char* path, int flags)                                  \
  {                                                                                                \
    REAL(int, name, int, const char*, int);                                                        \
    int result = real_##name(dirfd, path, flags);                                                  \
    after_open(dirfd, path, flags, result, errno);                                                 \
    return result;                                                                                 \
  }

DEFINE_OPEN_2(__open_2)
DEFINE_OPEN_2(__open64_2)
DEFINE_OPENAT_2(__openat_2)
DEFINE_OPENAT_2(__openat64_2)

NVFRESH_EXPORT int creat(const char* path, mode_t mode)
{
  REAL(int, creat, const char*, mode_t);
  int result = real_creat(path, mode);
  after_open(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, result, errno);
  return result;
}

NVFRESH_EXPORT int creat64(const char* path, mode_t mode)
{
  REAL(int, creat64, const char*, mode_t);
  int result = real_creat64(path, mode);
  after_open(AT_FDCWD, path, O_WRONLY | O_CREAT | O_TRUNC, result, errno);
  return result;
}

// fopen's mode string as open flags: 'r' alone reads, anything with 'w', 'a' or '+' writes.
static int fopen_flags(const char* mode)
{
  if (mode == NULL) {
    return O_RDONLY;
  }
  if (strchr(mode, 'w') || strchr(mode, 'a')) {
    return O_WRONLY | O_CREAT;
  }
  return strchr(mode, '+') ? O_RDWR : O_RDONLY;
}

static void after_fopen(const char* path, const char* mode, FILE* result, int saved_errno)
{
  after_open(AT_FDCWD, path, fopen_flags(mode), result ? fileno(result) : -1, saved_errno);
}

#define DEFINE_FOPEN(name)                                                                         \
  NVFRESH_EXPORT FILE* name(const char* path, const char* mode)                                    \
  {                                                                                                \
    REAL(FILE*, name, const char*, const char*);                                                   \
    FILE* result = real_##name(path, mode);                                                        \
    after_fopen(path, mode, result, errno);                                                        \
    return result;                                                                                 \
  }

DEFINE_FOPEN(fopen)
DEFINE_FOPEN(fopen64)

#define DEFINE_FREOPEN(name)                                                                       \
  NVFRESH_EXPORT FILE* name(const char* path, const char* mode, FILE* stream)                      \
  {                                                                                                \
    REAL(FILE*, name, const char*, const char*, FILE*);                                            \
    FILE* result = real_##name(path, mode, stream);                                                \
    if (path != NULL) {                                                                            \
      after_fopen(path, mode, result, errno);                                                      \
    }                                                                                              \
    return result;                                                                                 \
  }

DEFINE_FREOPEN(freopen)
DEFINE_FREOPEN(freopen64)

// ---- stat and access ------------------------------------------------------------------------------

static void after_lookup(int dirfd, const char* path, int result, int saved_errno, char found)
{
  if (!tracing()) {
    errno = saved_errno;
    return;
  }
  ++t_busy;
  if (result == 0) {
    record(found, dirfd, path);
  } else if (lookup_failed(saved_errno)) {
    record(NVFRESH_TRACE_MISSING, dirfd, path);
  }
  --t_busy;
  errno = saved_errno;
}

// An empty path with AT_EMPTY_PATH is an fstat of dirfd itself: nothing was looked up.
static int is_name_lookup(const char* path)
{
  return path != NULL && path[0] != '\0';
}

#define DEFINE_STAT(name, type)                                                                    \
  NVFRESH_EXPORT int name(const char* path, struct type* buf)                                      \
  {                                                                                                \
    REAL(int, name, const char*, struct type*);                                                    \
    int result = real_##name(path, buf);                                                           \
    after_lookup(AT_FDCWD, path, result, errno,                                                    \
                 result == 0 ? letter_for_mode(buf->st_mode) : NVFRESH_TRACE_READ);                \
    return result;                                                                                 \
  }

DEFINE_STAT(stat, stat)
DEFINE_STAT(stat64, stat64)
DEFINE_STAT(lstat, stat)
DEFINE_STAT(lstat64, stat64)

#define DEFINE_FSTATAT(name, type)                                                                 \
  NVFRESH_EXPORT int name(int dirfd, const char* path, struct type* buf, int flags)                \
  {                                                                                                \
    REAL(int, name, int, const char*, struct type*, int);                                          \
    int result = real_##name(dirfd, path, buf, flags);                                             \
    if (is_name_lookup(path)) {                                                                    \
      after_lookup(dirfd, path, result, errno,                                                     \
                   result == 0 ? letter_for_mode(buf->st_mode) : NVFRESH_TRACE_READ);              \
    }                                                                                              \
    return result;                                                                                 \
  }

DEFINE_FSTATAT(fstatat, stat)
DEFINE_FSTATAT(fstatat64, stat64)

// Binaries built against glibc < 2.33 call these (the CUDA tools do).
#define DEFINE_XSTAT(name, type)                                                                   \
  NVFRESH_EXPORT int name(int ver, const char* path, struct type* buf)                             \
  {                                                                                                \
    REAL(int, name, int, const char*, struct type*);                                               \
    int result = real_##name(ver, path, buf);                                                      \
    after_lookup(AT_FDCWD, path, result, errno,                                                    \
                 result == 0 ? letter_for_mode(buf->st_mode) : NVFRESH_TRACE_READ);                \
    return result;                                                                                 \
  }

DEFINE_XSTAT(__xstat, stat)
DEFINE_XSTAT(__xstat64, stat64)
DEFINE_XSTAT(__lxstat, stat)
DEFINE_XSTAT(__lxstat64, stat64)

#define DEFINE_FXSTATAT(name, type)                                                                \
  NVFRESH_EXPORT int name(int ver, int dirfd, const char* path, struct type* buf, int flags)       \
  {                                                                                                \
    REAL(int, name, int, int, const char*, struct type*, int);                                     \
    int result = real_##name(ver, dirfd, path, buf, flags);                                        \
    if (is_name_lookup(path)) {                                                                    \
      after_lookup(dirfd, path, result, errno,                                                     \
                   result == 0 ? letter_for_mode(buf->st_mode) : NVFRESH_TRACE_READ);              \
    }                                                                                              \
    return result;                                                                                 \
  }

DEFINE_FXSTATAT(__fxstatat, stat)
DEFINE_FXSTATAT(__fxstatat64, stat64)

NVFRESH_EXPORT int statx(int dirfd, const char* path, int flags, unsigned int mask,
                         struct statx* buf)
{
  REAL(int, statx, int, const char*, int, unsigned int, struct statx*);
  int result = real_statx(dirfd, path, flags, mask, buf);
  if (is_name_lookup(path)) {
    char found = result == 0 && (buf->stx_mask & STATX_TYPE) ? letter_for_mode(buf->stx_mode)
                                                             : NVFRESH_TRACE_READ;
    after_lookup(dirfd, path, result, errno, found);
  }
  return result;
}

// access() does not say what it found; ask the kernel directly (no wrapper, no allocation).
static char found_letter(int dirfd, const char* path)
{
  struct stat st;
  if (syscall(SYS_newfstatat, dirfd, path, &st, 0) == 0) {
    return letter_for_mode(st.st_mode);
  }
  return NVFRESH_TRACE_READ;
}

NVFRESH_EXPORT int access(const char* path, int mode)
{
  REAL(int, access, const char*, int);
  int result = real_access(path, mode);
  int saved = errno;
  if (tracing()) {
    after_lookup(AT_FDCWD, path, result, saved,
                 result == 0 ? found_letter(AT_FDCWD, path) : NVFRESH_TRACE_READ);
  }
  errno = saved;
  return result;
}

NVFRESH_EXPORT int faccessat(int dirfd, const char* path, int mode, int flags)
{
  REAL(int, faccessat, int, const char*, int, int);
  int result = real_faccessat(dirfd, path, mode, flags);
  int saved = errno;
  if (tracing() && is_name_lookup(path)) {
    after_lookup(dirfd, path, result, saved,
                 result == 0 ? found_letter(dirfd, path) : NVFRESH_TRACE_READ);
  }
  errno = saved;
  return result;
}

// ---- exec -----------------------------------------------------------------------------------------

// ---- the step cache ------------------------------------------------------------------------------

// NVFRESH_STEP_RUNNER (set by the launcher when the step cache is on) names nvfresh itself: cicc and
// ptxas are started as "<runner> __step <path> <argv...>", which serves the step from the cache or
// runs the tool (lib/step/step_runner.hpp). The runner speaks for itself on the trace channel, so a
// runner that this library is loaded into (a dynamically linked nvfresh) is not traced.
static const char k_runner_variable[] = "NVFRESH_STEP_RUNNER=";
static const char k_step_preload_variable[] = "NVFRESH_STEP_PRELOAD=";
enum { k_runner_max_args = 4096, k_runner_max_env = 4096 };
static char g_step_preload[PATH_MAX * 4];

static const char* env_lookup(char* const envp[], const char* assignment_prefix)
{
  size_t len = strlen(assignment_prefix);
  for (size_t i = 0; envp != NULL && envp[i] != NULL; ++i) {
    if (strncmp(envp[i], assignment_prefix, len) == 0) {
      return envp[i] + len;
    }
  }
  return NULL;
}

static int is_step_tool(const char* path)
{
  const char* name = base_name(path);
  return strcmp(name, "cicc") == 0 || strcmp(name, "ptxas") == 0;
}

static int runs_as_step_runner(void)
{
  const char* runner = getenv("NVFRESH_STEP_RUNNER");
  if (runner == NULL || runner[0] != '/') {
    return 0;
  }
  char exe[PATH_MAX];
  long len = syscall(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", exe, sizeof exe - 1);
  exe[len > 0 ? len : 0] = '\0';
  return strcmp(exe, runner) == 0;
}

// Execs the runner in place of a step tool; returns only when it does not (then the tool runs).
static void exec_step_runner(int (*real)(const char*, char* const*, char* const*), const char* path,
                             char* const argv[], char* const envp[])
{
  const char* runner = env_lookup(envp, k_runner_variable);
  if (runner == NULL || runner[0] != '/' || path == NULL || !is_step_tool(path) || argv == NULL ||
      syscall(SYS_faccessat, AT_FDCWD, path, X_OK) != 0) {
    return;
  }
  size_t argc = 0;
  while (argv[argc] != NULL) {
    if (++argc > k_runner_max_args) {
      return;
    }
  }
  char* runner_argv[k_runner_max_args + 4];
  runner_argv[0] = (char*)runner;
  runner_argv[1] = (char*)"__step";
  runner_argv[2] = (char*)path;
  for (size_t i = 0; i < argc; ++i) {
    runner_argv[3 + i] = argv[i];
  }
  runner_argv[3 + argc] = NULL;
  // The runner gets no LD_PRELOAD (a sanitized, dynamic nvfresh refuses to start behind another
  // preloaded library), and NVFRESH_STEP_PRELOAD with its value, which it gives the tool back.
  size_t envc = 0;
  while (envp != NULL && envp[envc] != NULL) {
    if (++envc > k_runner_max_env) {
      return;
    }
  }
  char* runner_env[k_runner_max_env + 2];
  size_t used = 0;
  const char* preload = NULL;
  for (size_t i = 0; i < envc; ++i) {
    if (strncmp(envp[i], "LD_PRELOAD=", strlen("LD_PRELOAD=")) == 0) {
      preload = envp[i] + strlen("LD_PRELOAD=");
    } else if (strncmp(envp[i], k_step_preload_variable, strlen(k_step_preload_variable)) != 0) {
      runner_env[used++] = envp[i];
    }
  }
  if (preload != NULL) {
    if (strlen(k_step_preload_variable) + strlen(preload) >= sizeof g_step_preload) {
      return;
    }
    strcpy(g_step_preload, k_step_preload_variable);
    strcat(g_step_preload, preload);
    runner_env[used++] = g_step_preload;
  }
  runner_env[used] = NULL;
  int saved = errno;
  real(runner, runner_argv, runner_env);
  errno = saved;
}

// A shell's PATH search tries execve in each directory: the failures are lookups too. (A success
// does not return; the new program's constructor records it.)
NVFRESH_EXPORT int execve(const char* path, char* const argv[], char* const envp[])
{
  REAL(int, execve, const char*, char* const*, char* const*);
  if (tracing()) {
    report_lost();  // the count dies with this image
    // This image ends here when the exec succeeds: only a path it can run (a shell's PATH search
    // tries many that it cannot) sends its times.
    if (syscall(SYS_faccessat, AT_FDCWD, path, X_OK) == 0) {
      emit_times();
    }
    exec_step_runner(real_execve, path, argv, envp);
  }
  int result = real_execve(path, argv, envp);
  after_lookup(AT_FDCWD, path, result, errno, NVFRESH_TRACE_READ);
  return result;
}
