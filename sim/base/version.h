/* version.h: the version strata reports (CLI, JSON outputs). */
#ifndef STRATA_VERSION_H
#define STRATA_VERSION_H

#define STRATA_VERSION "0.1.0"

#endif
