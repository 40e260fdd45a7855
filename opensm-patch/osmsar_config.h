/* osmsar_config: the OpenSM plugin's configuration file (config/osmsar.conf documents every key),
 * read into libsar's routing options (sar/c.h). The only C++ of the plugin besides libsar; it
 * parses with libsar's public line reader (sar/io/line_reader.h). Nothing throws or prints. */
#ifndef SAR_OPENSM_PATCH_OSMSAR_CONFIG_H_
#define SAR_OPENSM_PATCH_OSMSAR_CONFIG_H_

#include <stddef.h>

#include "sar/c.h"

#ifdef __cplusplus
extern "C" {
#endif

#define OSMSAR_PATH_MAX 1024

/* The file's keys, for the plugin's start-up log line. */
typedef struct OsmsarConfig {
  char engine[32];                    /* a libsar engine: "sar" (default), "dfsssp", "dmodc", ... */
  char mapping_file[OSMSAR_PATH_MAX]; /* job mapping; "" = none; missing file = no jobs */
  char cn_guid_file[OSMSAR_PATH_MAX]; /* compute node GUIDs; "" = every HCA */
  char io_guid_file[OSMSAR_PATH_MAX]; /* storage node GUIDs; "" = none */
  int num_vls;                        /* virtual lanes usable as layers, 1..15 (8) */
  int threads;                        /* worker threads, 0 = all cores (0) */
  int allow_disconnected;             /* route a partly disconnected fabric (0) */
  int delta;                          /* keep what costs nothing of the switches' tables (1) */
  int sar_refine;                     /* sar: the refinement of job routes (1) */
  double sar_all_pairs_budget; /* sar: all-pairs load cap / all-pairs bound, 0 = none (1.25) */
  uint64_t sar_refine_work;    /* sar: the refinement's work limit in steps, 1..2^40 (2^28) */
  int sar_no_regret;           /* sar: no job slower than under dfsssp (1) */
  int fors_only_where_faster;  /* FORS only where its phases are not slower (0) */
  int job_hca_pairs_all;       /* job_hca_pairs: 0 = rails (default), 1 = all */
  /* The baseLID/highLID migration protocol (docs/opensm-plugin.md). */
  int migration;                          /* on: LMC 1 routing and the five-phase update (0) */
  int ack_timeout_ms;                     /* phase 2 deadline (2000) */
  int repath_timeout_ms;                  /* phase 4 deadline (2000) */
  int exclude_after;                      /* missed epochs in a row before exclusion (3) */
  int ack_scope_changed;                  /* 0: every subscriber acks (default); 1: only the
                                             ports of routes that change */
  char status_file[OSMSAR_PATH_MAX];      /* migration status, one JSON line; "" = none */
  char metrics_textfile[OSMSAR_PATH_MAX]; /* Prometheus textfile of the passes; "" = none */
  /* FORS schedules are written 0640 (job placement is private) with this group, so that the
   * jobs' users may read them; "" = OpenSM's own group (-1). */
  char fors_schedule_group[64];
  long fors_schedule_gid;
} OsmsarConfig;

/* The defaults. */
void OsmsarConfigInit(OsmsarConfig* config);
/* Reads "key value" lines ('#' comments, blank lines ignored) over the defaults. An unknown key,
 * a missing or bad value fails with "path:line: ...". Returns 0 on success; else nonzero and
 * *errptr (free with sar_free), as in sar/c.h. */
int OsmsarReadConfig(const char* path, OsmsarConfig* config, char** errptr);
/* The routing options the config stands for (the mapping file optional: sar-filterd may not have
 * written one yet). NULL when out of memory. Free with sar_options_destroy. */
sar_options_t* OsmsarOptions(const OsmsarConfig* config);

#ifdef __cplusplus
}
#endif

#endif /* SAR_OPENSM_PATCH_OSMSAR_CONFIG_H_ */
