/*
 * The `vaultmem` command as installed by `make install`: a small native front for the
 * Python CLI.
 *
 * While a watcher serves the vault, `search`, `get`, `query`, `reference`, `status` and
 * `index` are answered by the watcher; the command line only has to send its argv over the
 * watcher's socket and print the reply. Started as Python, that costs an interpreter start
 * (~13 ms on a 2-core machine) before the first byte is sent. This program does the same
 * forwarding in ~1 ms: the rules are those of vaultmem/daemon/client.py (`forwardable`,
 * `find_root`, `passed_env`, the framed reply), and tests/cli/test_launcher.py holds the two
 * to the same answers. What is forwarded (commands, root options, environment) and the
 * limits are not restated here: they come from forward.h, which the Python lists generate
 * (vaultmem/daemon/forwarding.py). For everything else, and whenever anything is unusual
 * (no watcher, an error reply, a path too long for the socket, bytes that are not UTF-8,
 * `~user`), it runs the Python CLI in its place (execv), which decides again and does the work.
 *
 * Build (`make install` does this):
 *   mkdir -p build && python -m vaultmem.daemon.forwarding --header > build/forward.h
 *   cc -O2 -Ibuild -DVM_PYTHON='"/path/to/venv/bin/python"' -o vaultmem launcher/vaultmem.c
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#ifndef VM_PYTHON
#error "define VM_PYTHON as the path of the interpreter that has vaultmem installed"
#endif

/* CONFIG_NAME, SOCKET_REL, MAX_SOCKET_BYTES, STALL_S, MAX_REPLY, VAULT_OPTION, ENV_PREFIX
 * and the NULL-terminated lists FORWARDED, ROOT_OPTIONS, ROOT_FLAGS, HELP_FLAGS, PASSED_ENV */
#include "forward.h"

extern char **environ;

static int g_argc;
static char **g_argv;

/* Run the Python CLI with the same arguments; never returns. */
static void run_python(void) {
    static const char *code =
        "import sys; sys.argv[0] = 'vaultmem'; from vaultmem.cli.entry import main; sys.exit(main())";
    char **args = calloc((size_t)g_argc + 3, sizeof(char *));
    if (args == NULL) _exit(70);
    args[0] = VM_PYTHON;
    args[1] = "-c";
    args[2] = (char *)code;
    for (int i = 1; i < g_argc; i++) args[i + 2] = g_argv[i];
    args[g_argc + 2] = NULL;
    execv(VM_PYTHON, args);
    fprintf(stderr, "vaultmem: error: cannot run %s: %s\n", VM_PYTHON, strerror(errno));
    _exit(70);
}

static int starts_with(const char *s, const char *prefix) { return strncmp(s, prefix, strlen(prefix)) == 0; }

static int in_list(const char *s, const char **list) {
    for (int i = 0; list[i] != NULL; i++)
        if (strcmp(s, list[i]) == 0) return 1;
    return 0;
}

/* How many arguments a root option before the command takes up: 2 for `--vault X`, 1 for
 * `--vault=X` or a flag, 0 for anything else. */
static int root_option(const char *arg) {
    for (int i = 0; ROOT_OPTIONS[i] != NULL; i++) {
        size_t n = strlen(ROOT_OPTIONS[i]);
        if (strncmp(arg, ROOT_OPTIONS[i], n) == 0 && (arg[n] == '\0' || arg[n] == '='))
            return arg[n] == '\0' ? 2 : 1;
    }
    return in_list(arg, ROOT_FLAGS);
}

/* client.command_of + client.forwardable */
static int forwardable(int argc, char **argv) {
    const char *command = NULL;
    int i = 0;
    while (i < argc) {
        int taken = root_option(argv[i]);
        if (taken == 0) {
            command = argv[i][0] == '-' ? NULL : argv[i];
            break;
        }
        i += taken;
    }
    if (command == NULL || !in_list(command, FORWARDED)) return 0;
    for (i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (in_list(argv[i], HELP_FLAGS)) return 0;
    }
    return 1;
}

/* client.vault_flag: the last --vault given before "--" */
static const char *vault_flag(int argc, char **argv) {
    const char *value = NULL;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--") == 0) break;
        if (strcmp(argv[i], VAULT_OPTION) == 0 && i + 1 < argc) {
            value = argv[++i];
        } else if (starts_with(argv[i], VAULT_OPTION "=")) {
            value = argv[i] + strlen(VAULT_OPTION "=");
        }
    }
    return value;
}

static int is_file(const char *dir, const char *name) {
    char path[PATH_MAX];
    struct stat st;
    if (snprintf(path, sizeof path, "%s/%s", strcmp(dir, "/") == 0 ? "" : dir, name) >= (int)sizeof path) return 0;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* client.find_root: fills `root`; 0 when there is no vault (or a case left to Python). */
static int find_root(int argc, char **argv, const char *cwd, char *root) {
    const char *explicit = vault_flag(argc, argv);
    if (explicit == NULL || explicit[0] == '\0') explicit = getenv("VAULTMEM_VAULT");
    if (explicit != NULL && explicit[0] != '\0') {
        char joined[PATH_MAX];
        if (explicit[0] == '~') {
            const char *home = getenv("HOME");
            if (home == NULL || (explicit[1] != '\0' && explicit[1] != '/')) return 0; /* ~user */
            if (snprintf(joined, sizeof joined, "%s%s", home, explicit + 1) >= (int)sizeof joined) return 0;
        } else if (explicit[0] == '/') {
            if (snprintf(joined, sizeof joined, "%s", explicit) >= (int)sizeof joined) return 0;
        } else if (snprintf(joined, sizeof joined, "%s/%s", cwd, explicit) >= (int)sizeof joined) {
            return 0;
        }
        if (realpath(joined, root) == NULL) return 0;
        return is_file(root, CONFIG_NAME);
    }
    if (realpath(cwd, root) == NULL) return 0;
    for (;;) {
        if (is_file(root, CONFIG_NAME)) return 1;
        char *slash = strrchr(root, '/');
        if (slash == NULL || strcmp(root, "/") == 0) return 0;
        if (slash == root)
            root[1] = '\0';
        else
            *slash = '\0';
    }
}

/* A growing byte buffer. */
typedef struct {
    char *data;
    size_t len, cap;
} buf_t;

static void put(buf_t *b, const char *s, size_t n) {
    if (b->len + n + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 4096;
        while (b->len + n + 1 > cap) cap *= 2;
        char *data = realloc(b->data, cap);
        if (data == NULL) run_python();
        b->data = data;
        b->cap = cap;
    }
    memcpy(b->data + b->len, s, n);
    b->len += n;
    b->data[b->len] = '\0';
}

static void puts_(buf_t *b, const char *s) { put(b, s, strlen(s)); }

static int valid_utf8(const unsigned char *s) {
    while (*s) {
        int n = *s < 0x80 ? 0 : (*s >> 5) == 0x6 ? 1 : (*s >> 4) == 0xE ? 2 : (*s >> 3) == 0x1E ? 3 : -1;
        if (n < 0) return 0;
        s++;
        for (int i = 0; i < n; i++, s++)
            if ((*s & 0xC0) != 0x80) return 0;
    }
    return 1;
}

/* A JSON string; UTF-8 passes through (the watcher decodes UTF-8). */
static void put_json(buf_t *b, const char *s) {
    if (!valid_utf8((const unsigned char *)s)) run_python();
    put(b, "\"", 1);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        char esc[8];
        if (*p == '"' || *p == '\\') {
            esc[0] = '\\';
            esc[1] = (char)*p;
            put(b, esc, 2);
        } else if (*p < 0x20) {
            snprintf(esc, sizeof esc, "\\u%04x", *p);
            put(b, esc, 6);
        } else {
            put(b, (const char *)p, 1);
        }
    }
    put(b, "\"", 1);
}

/* client.passed_env, plus COLUMNS from the terminal (the watcher has none to ask). */
static void put_env(buf_t *b, int tty) {
    int first = 1, columns = 0;
    puts_(b, "{");
    for (char **e = environ; *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        if (eq == NULL) continue;
        char name[256];
        size_t n = (size_t)(eq - *e);
        if (n >= sizeof name) continue;
        memcpy(name, *e, n);
        name[n] = '\0';
        if (!starts_with(name, ENV_PREFIX) && !in_list(name, PASSED_ENV)) continue;
        if (strcmp(name, "COLUMNS") == 0) columns = 1;
        if (!first) puts_(b, ", ");
        first = 0;
        put_json(b, name);
        puts_(b, ": ");
        put_json(b, eq + 1);
    }
    struct winsize ws;
    if (tty && !columns && ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0) {
        char value[16];
        snprintf(value, sizeof value, "%u", (unsigned)ws.ws_col);
        if (!first) puts_(b, ", ");
        puts_(b, "\"COLUMNS\": ");
        put_json(b, value);
    }
    puts_(b, "}");
}

static int write_all(int fd, const char *s, size_t n) {
    while (n > 0) {
        ssize_t w = write(fd, s, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            return -1;
        }
        s += w;
        n -= (size_t)w;
    }
    return 0;
}

int main(int argc, char **argv) {
    g_argc = argc;
    g_argv = argv;
    char cwd[PATH_MAX], root[PATH_MAX], sock_path[PATH_MAX + sizeof SOCKET_REL];
    /* Python decides: a watcher already found unresponsive, or derived state kept elsewhere. */
    if (getenv(UNRESPONSIVE_ENV) != NULL || getenv(STATE_DIR_ENV) != NULL) run_python();
    /* Run by git (a hook): git's environment (its index file, its dir) is this command's to
       read, not the watcher's. */
    if (getenv("GIT_INDEX_FILE") != NULL || getenv("GIT_DIR") != NULL) run_python();
    if (!forwardable(argc - 1, argv + 1) || getcwd(cwd, sizeof cwd) == NULL) run_python();
    if (!find_root(argc - 1, argv + 1, cwd, root)) run_python();
    snprintf(sock_path, sizeof sock_path, "%s%s", root, SOCKET_REL);
    struct stat st;
    if (strlen(sock_path) > MAX_SOCKET_BYTES || stat(sock_path, &st) != 0) run_python();

    int tty = isatty(STDOUT_FILENO);
    buf_t req = {0};
    puts_(&req, "{\"op\": \"cli\", \"argv\": [");
    for (int i = 1; i < argc; i++) {
        if (i > 1) puts_(&req, ", ");
        put_json(&req, argv[i]);
    }
    puts_(&req, "], \"env\": ");
    put_env(&req, tty);
    puts_(&req, tty ? ", \"tty\": true, \"cwd\": " : ", \"tty\": false, \"cwd\": ");
    put_json(&req, cwd);
    puts_(&req, ", \"reply\": \"frame\"}\n");

    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    memcpy(addr.sun_path, sock_path, strlen(sock_path) + 1);
    if (fd < 0 || connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) run_python();
    /* Only a watcher of this user hears the arguments and environment (client.py peer_uid). */
    struct ucred peer;
    socklen_t peer_len = sizeof peer;
    if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &peer, &peer_len) != 0 || peer.uid != getuid()) run_python();
    /* The watcher sends a space as soon as it has read the request (client.py FIRST_BYTE_S):
     * nothing by then is a hung watcher, and Python answers without it (and says so). */
    long first_ms = FIRST_BYTE_MS;
    const char *configured = getenv(TIMEOUT_ENV);
    if (configured != NULL && atof(configured) > 0) first_ms = (long)(atof(configured) * 1000);
    struct timeval first = {.tv_sec = first_ms / 1000, .tv_usec = (first_ms % 1000) * 1000};
    struct timeval stall = {.tv_sec = STALL_S};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &first, sizeof first);
    signal(SIGPIPE, SIG_IGN);
    if (write_all(fd, req.data, req.len) != 0) run_python();

    buf_t reply = {0};
    char chunk[65536];
    for (;;) {
        ssize_t n = read(fd, chunk, sizeof chunk);
        if (n == 0) break;
        if (n < 0) {
            if (errno == EINTR) continue;
            if (reply.len == 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                setenv(UNRESPONSIVE_ENV, "no answer from the watcher", 1);
            run_python(); /* stalled or broken: run it here, as the Python client does */
        }
        if (reply.len == 0) setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &stall, sizeof stall);
        put(&reply, chunk, (size_t)n);
        if ((long)reply.len > MAX_REPLY) run_python();
    }
    close(fd);

    /* "VMF1 <exit> <stdout bytes> <stderr bytes>\n" + stdout + stderr, after keepalive spaces;
     * anything else (an error reply in JSON: the watcher is stopping, ...) goes to Python. */
    size_t at = 0;
    while (at < reply.len && reply.data[at] == ' ') at++;
    if (reply.len - at < 5 || strncmp(reply.data + at, "VMF1 ", 5) != 0) run_python();
    char *head_end = memchr(reply.data + at, '\n', reply.len - at);
    if (head_end == NULL) run_python();
    long code, n_out, n_err;
    char tail;
    *head_end = '\0';
    if (sscanf(reply.data + at + 5, "%ld %ld %ld%c", &code, &n_out, &n_err, &tail) != 3 || n_out < 0 || n_err < 0)
        run_python();
    const char *body = head_end + 1;
    if ((size_t)(reply.data + reply.len - body) != (size_t)(n_out + n_err)) run_python();
    write_all(STDERR_FILENO, body + n_out, (size_t)n_err);
    if (write_all(STDOUT_FILENO, body, (size_t)n_out) != 0) return 1; /* `| head`: as the Python client */
    return (int)code;
}
