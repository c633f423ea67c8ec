/* test_badinput_system.c: broken system files and traces that do not fit
 * their system, through `strata run`.  Each must exit 1 with
 * "file:line: field: message" (the line and field named below) and leave
 * no --json file behind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test.h"
#include "util.h"

static char dir[64];
static char cwd[512];

/* A small valid system (line numbers in the cases refer to it). */
static const char base[] =
    "name: two-a100\n"                                             /*  1 */
    "chip: %s/configs/nvidia-a100-sxm-80gb.yaml\n"                 /*  2 */
    "devices: [gpu0, gpu1]\n"                                      /*  3 */
    "nodes:\n"                                                     /*  4 */
    "  - {name: sw, kind: switch}\n"                               /*  5 */
    "  - {name: cpu, kind: host, bandwidth_GBps: 100}\n"           /*  6 */
    "links:\n"                                                     /*  7 */
    "  - {level: nvlink, from: [gpu0, gpu1], to: sw, bandwidth_GBps: 300, latency_ns: 400}\n" /* 8 */
    "  - {level: pcie, from: \"*\", to: cpu, bandwidth_GBps: 31.5, latency_ns: 500}\n";        /* 9 */

static const char trace2[] =
    "{\"strata_trace\": 1, \"devices\": [\"gpu0\", \"gpu1\"], \"ops\": [\n"
    "  {\"id\": \"a\", \"kind\": \"memcpy\", \"device\": \"gpu0\", \"direction\": \"p2p\",\n"
    "   \"dst_device\": \"gpu1\", \"bytes\": 1000000}]}\n";

/* Write base with from replaced by to as dir/sys.yaml. */
static void write_sys(const char *from, const char *to)
{
    char text[4096], out[4096];
    snprintf(text, sizeof text, base, cwd);
    const char *at = from ? strstr(text, from) : NULL;
    if (from != NULL && at == NULL) {
        fprintf(stderr, "test bug: '%s' not in base\n", from);
        exit(2);
    }
    if (at == NULL) {
        snprintf(out, sizeof out, "%s", text);
    } else {
        snprintf(out, sizeof out, "%.*s%s%s", (int)(at - text), text, to, at + strlen(from));
    }
    char path[128];
    snprintf(path, sizeof path, "%s/sys.yaml", dir);
    tu_write_file(path, out);
}

/* strata run on dir/sys.yaml and trace (text); expect exit 1 and
 * "<file>:<line>: <field>: ..." on stderr, no report file. */
static void expect(const char *what, const char *trace, const char *file, int line,
                   const char *field, const char *msg_part)
{
    char tpath[128], json[128], err[128], cmd[1024];
    snprintf(tpath, sizeof tpath, "%s/t.json", dir);
    snprintf(json, sizeof json, "%s/out.json", dir);
    snprintf(err, sizeof err, "%s/err.txt", dir);
    tu_write_file(tpath, trace);
    snprintf(cmd, sizeof cmd, "'%s' run --hw '%s/sys.yaml' --trace '%s' --json '%s' 2>'%s' >/dev/null",
             STRATA_BINARY, dir, tpath, json, err);
    int st = system(cmd);
    char *e = tu_read_file(err, NULL);
    char want[256];
    snprintf(want, sizeof want, "%s:%d: %s: ", strcmp(file, "sys") == 0 ? "sys.yaml" : "t.json",
             line, field);
    int ok = st != -1 && WIFEXITED(st) && WEXITSTATUS(st) == 1 && e != NULL &&
             strstr(e, want) != NULL && strstr(e, msg_part) != NULL && !tu_exists(json);
    if (ok) {
        test_passed_++;
    } else {
        test_failed_++;
        fprintf(stderr, "case '%s': want '%s...%s', exit 1, no %s; got exit %d: %s", what, want,
                msg_part, json, WIFEXITED(st) ? WEXITSTATUS(st) : -1, e ? e : "(nothing)\n");
    }
    free(e);
    unlink(json);
}

int main(void)
{
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(tu_mkdtemp(dir, sizeof dir, "strata-badsys") == 0);

    /* the base system runs */
    write_sys(NULL, NULL);
    char tpath[128], cmd[1024];
    snprintf(tpath, sizeof tpath, "%s/t.json", dir);
    tu_write_file(tpath, trace2);
    snprintf(cmd, sizeof cmd, "'%s' run --hw '%s/sys.yaml' --trace '%s' --quiet", STRATA_BINARY,
             dir, tpath);
    CHECK_EQ_INT(tu_sh(cmd), 0);

    write_sys("to: sw,", "to: nvswich,");
    expect("link to nowhere", trace2, "sys", 8, "links[0].to", "no device or node 'nvswich'");
    write_sys("from: [gpu0, gpu1]", "from: [gpu0, gpu9]");
    expect("unknown device in a link", trace2, "sys", 8, "links[0].from",
           "no device or node 'gpu9'");
    write_sys("devices: [gpu0, gpu1]", "devices: [gpu0, gpu0]");
    expect("duplicate device name", trace2, "sys", 3, "devices[1]", "duplicate device name 'gpu0'");
    write_sys("{name: sw, kind: switch}", "{name: gpu1, kind: switch}");
    expect("node named like a device", trace2, "sys", 5, "nodes[0]", "already a device");
    write_sys("{name: sw, kind: switch}", "{name: sw, kind: router}");
    expect("unknown node kind", trace2, "sys", 5, "nodes[0]", "unknown node kind 'router'");
    write_sys("{name: sw, kind: switch}", "{name: sw, kind: switch, nvls: maybe}");
    expect("nvls not a boolean", trace2, "sys", 5, "nodes[0]", "expected true or false");
    write_sys("{name: sw, kind: switch}", "{name: sw, kind: switch}\n  - {name: h, kind: host, nvls: true}");
    expect("nvls on a host", trace2, "sys", 6, "nodes[1]", "property of a switch");
    write_sys("level: nvlink", "level: l2");
    expect("link level that is no link", trace2, "sys", 8, "links[0].level",
           "'l2' is not a link level");
    write_sys("latency_ns: 400}", "latency_ns: 400, speed: 3}");
    expect("unknown link key", trace2, "sys", 8, "links[0].speed", "unknown key");
    write_sys("from: [gpu0, gpu1], to: sw", "from: [gpu0, sw], to: sw");
    expect("link to itself", trace2, "sys", 8, "links[0]", "to itself");
    write_sys("devices: [gpu0, gpu1]\n", "devices: [gpu0, gpu1]\nturbo: 1\n");
    expect("unknown system key", trace2, "sys", 4, "turbo", "unknown key");
    write_sys("nvidia-a100-sxm-80gb.yaml", "no-such-chip.yaml");
    expect("missing chip file", trace2, "sys", 2, "chip", "cannot load");
    /* repeat groups (docs/systems.md): the entry, its variables' values */
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 2}, nodes: [{name: \"sw{j}\", kind: switch}]}");
    expect("unknown repeat variable", trace2, "sys", 5, "nodes[0].nodes[0] (k=0)",
           "not a variable of a repeat group");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 2}, nodes: [{name: \"sw{k-1}\", kind: switch}]}");
    expect("a name's expression with '-'", trace2, "sys", 5, "nodes[0].nodes[0] (k=0)", "unexpected '-'");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 2}, nodes: [{name: \"sw{(k+1}\", kind: switch}]}");
    expect("a '(' without its ')'", trace2, "sys", 5, "nodes[0].nodes[0] (k=0)", "without its ')'");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 2}, nodes: [{name: \"sw{k%0}\", kind: switch}]}");
    expect("a remainder by 0", trace2, "sys", 5, "nodes[0].nodes[0] (k=0)", "division by 0");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 2}, nodes: [{name: \"sw{k\", kind: switch}]}");
    expect("a '{' without its '}'", trace2, "sys", 5, "nodes[0].nodes[0] (k=0)", "without its '}'");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 2}, nodes: [{name: sw, kind: switch}]}");
    expect("a repeat that names one node twice", trace2, "sys", 5, "nodes[0].nodes[0] (k=1)",
           "'sw' is already a switch");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 2}}");
    expect("a repeat group without its list", trace2, "sys", 5, "nodes[0].nodes",
           "a repeat group lists the nodes");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 0}, nodes: [{name: sw, kind: switch}]}");
    expect("a repeat of no copies", trace2, "sys", 5, "nodes[0].repeat.k", "");
    write_sys("{name: sw, kind: switch}", "{repeat: {[a]: 2}, nodes: [{name: sw, kind: switch}]}");
    expect("a repeat variable that is a list", trace2, "sys", 5, "nodes[0].repeat", "a variable is a letter");
    write_sys("{name: sw, kind: switch}", "{repeat: 3, nodes: [{name: sw, kind: switch}]}");
    expect("repeat not a mapping", trace2, "sys", 5, "nodes[0].repeat", "expected {VARIABLE: COUNT");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 2}, nodes: [{name: sw, kind: switch}], size: 1}");
    expect("unknown key in a repeat group", trace2, "sys", 5, "nodes[0].size", "unknown key");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 1000, i: 1000}, nodes: [{name: sw, kind: switch}]}");
    expect("a repeat group too large", trace2, "sys", 5, "nodes[0].repeat.i", "1 to 262144 copies");
    write_sys("{name: sw, kind: switch}", "{repeat: {k: 1000}, nodes: [{repeat: {i: 1000}, nodes: []}]}");
    expect("nested repeat groups too large", trace2, "sys", 5, "nodes[0].nodes[0].repeat.i",
           "with the groups around it");

    /* traces that do not fit the system */
    write_sys(NULL, NULL);
    expect("op on a device the system lacks",
           "{\"strata_trace\": 1, \"devices\": [\"gpu0\", \"gpu7\"], \"ops\": [\n"
           "  {\"id\": \"a\", \"kind\": \"elementwise\", \"dtype\": \"bf16\", \"device\": \"gpu7\",\n"
           "   \"elements\": 1000}]}\n",
           "t", 2, "ops[0].device", "device 'gpu7' is not in system two-a100");
    expect("copy to a device the system lacks",
           "{\"strata_trace\": 1, \"devices\": [\"gpu0\", \"gpu7\"], \"ops\": [\n"
           "  {\"id\": \"a\", \"kind\": \"memcpy\", \"device\": \"gpu0\", \"direction\": \"p2p\",\n"
           "   \"dst_device\": \"gpu7\", \"bytes\": 1000}]}\n",
           "t", 2, "ops[0].dst_device", "device 'gpu7' is not in system two-a100");
    write_sys("  - {level: nvlink, from: [gpu0, gpu1], to: sw, bandwidth_GBps: 300, latency_ns: 400}\n"
              "  - {level: pcie, from: \"*\", to: cpu, bandwidth_GBps: 31.5, latency_ns: 500}\n",
              "  - {level: nvlink, from: [gpu0], to: sw, bandwidth_GBps: 300, latency_ns: 400}\n");
    expect("no path between the devices", trace2, "t", 2, "ops[0]", "no path");
    /* a p2p copy needs its destination, and not itself */
    write_sys(NULL, NULL);
    expect("p2p without dst_device",
           "{\"strata_trace\": 1, \"devices\": [\"gpu0\", \"gpu1\"], \"ops\": [\n"
           "  {\"id\": \"a\", \"kind\": \"memcpy\", \"direction\": \"p2p\", \"bytes\": 1000}]}\n",
           "t", 2, "ops[0].dst_device", "needs \"dst_device\"");
    expect("dst_device on a host copy",
           "{\"strata_trace\": 1, \"devices\": [\"gpu0\", \"gpu1\"], \"ops\": [\n"
           "  {\"id\": \"a\", \"kind\": \"memcpy\", \"direction\": \"h2d\", \"dst_device\": \"gpu1\",\n"
           "   \"bytes\": 1000}]}\n",
           "t", 2, "ops[0].dst_device", "for a copy with direction \"p2p\"");
    tu_rmtree(dir);
    TEST_MAIN_END();
}
