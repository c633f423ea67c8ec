/* manpage.c: the man page, `strata help --man` (docs/strata.1 is its
 * output, installed as man1/strata.1).  The VERBS section is made from the
 * verb list (verbs.h) and each verb's usage text, so it cannot drift from
 * what the verbs accept; the other sections are the text below. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "version.h"

#define MAN_DATE "2026-12" /* the .TH date: when this text last changed */

/* Text as troff shows it literally: '-' as "\-", '\' as "\e", and a line
 * that would start with '.' or '\'' guarded by "\&". */
static void troff_text(FILE *f, const char *s, size_t n)
{
    int bol = 1;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (bol && (ch == '.' || ch == '\''))
            fputs("\\&", f);
        bol = ch == '\n';
        if (ch == '-')
            fputs("\\-", f);
        else if (ch == '\\')
            fputs("\\e", f);
        else
            fputc(ch, f);
    }
}

/* One verb: its usage lines as written (leading spaces dropped, no fill),
 * then its paragraph. */
static void verb_section(FILE *f, const char *name, const char *usage, const char *summary)
{
    fprintf(f, ".SS %s\n.nf\n", name);  /* a heading: its '-' is a hyphen */
    for (const char *p = usage; *p != '\0';) {
        const char *e = strchr(p, '\n');
        size_t n = e != NULL ? (size_t)(e - p) : strlen(p);
        size_t lead = strspn(p, " ");
        if (lead > n)
            lead = n;
        if (lead > 2)           /* continuation lines: indented under the verb */
            fputs("    ", f);
        troff_text(f, p + lead, n - lead);
        fputc('\n', f);
        p += n + (e != NULL);
    }
    fputs(".fi\n", f);
    troff_text(f, summary, strlen(summary));
    fputc('\n', f);
}

static const char head[] =
    ".SH NAME\n"
    "strata \\- cycle-approximate accelerator simulator: how fast a trace runs on a chip, "
    "and where the bytes wait\n"
    ".SH SYNOPSIS\n"
    ".B strata\n.I VERB\n[\\fIoptions\\fR]\n.br\n.B strata help\n.I VERB\n|\n"
    ".B strata help \\-\\-man\n|\n.B strata \\-V\n"
    ".SH DESCRIPTION\n"
    ".B strata\n"
    "replays operator traces (GEMMs, attention, elementwise ops, collectives,\n"
    "copies) on a model of a chip's compute units and memory levels (registers,\n"
    "shared memory, caches, DRAM, links) with a discrete-event engine, and\n"
    "predicts time with a breakdown of where it went, level by level.\n"
    "Chips are YAML configs; systems of many chips are YAML system files.\n"
    "Every verb answers \\fB\\-h\\fR/\\fB\\-\\-help\\fR.  Options take their value as\n"
    "\\fB\\-\\-opt VALUE\\fR or \\fB\\-\\-opt=VALUE\\fR; an output file given as \\fB\\-\\fR\n"
    "is standard output.\n"
    ".PP\n"
    "\\fB\\-\\-hw\\fR takes a path or the name of a shipped config or system\n"
    "(\\fBh100\\-sxm\\fR, \\fBb200\\fR, \\fBsystems/nvidia\\-dgx\\-a100\\fR); \\fB\\-\\-model\\fR a path\n"
    "or a shipped model name (\\fBllama\\-2\\-7b\\fR).  See \\fBstrata list\\fR.\n"
    ".SH VERBS\n";

static const char tail[] =
    ".SH OVERRIDES\n"
    "\\fB\\-\\-set KEY=VALUE\\fR changes one config value for this run: KEY is the\n"
    "value's path in the YAML with a level named by its name or kind and the unit\n"
    "suffix left out when VALUE has a unit (\\fBdram.bandwidth=4.8TB/s\\fR,\n"
    "\\fBl2.capacity=100MiB\\fR, \\fBclock=1.98GHz\\fR).  The same checks apply as in\n"
    "the file.\n"
    ".SH ENVIRONMENT\n"
    ".TP\n.B STRATA_PATH\n"
    "Colon-separated folders searched first for shipped names (each laid out like\n"
    "the data folder: configs/, configs/systems/, traces/models/).\n"
    ".TP\n.B STRATA_GNUPLOT\n"
    "The gnuplot binary to render plots with; empty or \\fBnone\\fR: never render.\n"
    ".TP\n.B STRATA_MAX_EVENTS\n"
    "The work budget of every simulation, in engine events (default 5e9; \\fBrun\n"
    "\\-\\-max\\-events\\fR overrides it).\n"
    ".TP\n.B STRATA_PROGRESS\n"
    "On a terminal, \\fBrun\\fR (and its what-ifs) and \\fBsweep\\fR past 2 s of wall time\n"
    "show one line on stderr, rewritten in place and cleared at the end (\\fBsimulating:\n"
    "412,000 of 1,000,000 ops (41%), 3.1 s\\fR); not with \\fB\\-\\-quiet\\fR or\n"
    "\\fB\\-\\-no\\-progress\\fR, nor when stderr is a file or a pipe.  \\fB1\\fR: draw it\n"
    "anyway, from the start; \\fB0\\fR: never.\n"
    ".TP\n.B STRATA_MAX_MEMORY\n"
    "The memory budget of every command, as a size (\\fB4GiB\\fR, \\fB512MiB\\fR):\n"
    "past it the command stops with an error and writes nothing (default 90% of\n"
    "physical memory; \\fBrun \\-\\-max\\-memory\\fR overrides it).\n"
    ".SH FILES\n"
    ".TP\n.I PREFIX/share/strata/configs\n"
    "Chip configs, system files (systems/) and data-sheet spec files (specs/).\n"
    ".TP\n.I PREFIX/share/strata/traces\n"
    "Model configs (models/) and example traces (examples/).\n"
    ".SH EXIT STATUS\n"
    "0 on success, 1 on bad input (printed as \\fIfile:line: field: what is wrong\\fR,\n"
    "with no output file left behind), 2 on bad usage; \\fBplan\\fR exits 3 when no\n"
    "configuration meets the SLA (its outputs written, the closest named).\n"
    ".SH EXAMPLES\n"
    ".nf\n"
    "strata list configs\n"
    "strata info \\-\\-hw h100\\-sxm\n"
    "strata gen llm \\-\\-model llama\\-2\\-7b \\-\\-phase decode \\-\\-context 2048 \\-o dec.json\n"
    "strata run \\-\\-hw h100\\-sxm \\-\\-trace dec.json \\-\\-set dram.bandwidth=4.8TB/s\n"
    "strata run \\-\\-hw h100\\-sxm \\-\\-op gemm:m=8192,n=8192,k=8192\n"
    "strata sweep \\-\\-hw h100\\-sxm \\-\\-trace dec.json \\-\\-vary dram.bandwidth=1TB/s..8TB/s:x2 "
    "\\-j4 \\-\\-out sweep/\n"
    ".fi\n"
    ".SH SEE ALSO\n"
    "README.md and docs/ in the source tree.\n";

void cli_man(FILE *f)
{
    fprintf(f, ".TH STRATA 1 \"%s\" \"strata %s\" \"User Commands\"\n", MAN_DATE,
            STRATA_VERSION);
    fputs(head, f);
#define CLI_VERB_MAN_(id, name, summary) verb_section(f, name, cli_##id##_usage, summary);
    CLI_VERB_MAP(CLI_VERB_MAN_)
#undef CLI_VERB_MAN_
    fputs(tail, f);
}
