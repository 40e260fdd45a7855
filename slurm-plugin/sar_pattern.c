/*
 * sar_pattern.so: SPANK plugin that adds --sar-pattern=alltoall|default to sbatch, salloc and
 * srun (docs/slurm.md). The value is checked on the submit host, so a typo is refused before the
 * job exists, and it is handed to the controller with spank_job_control_setenv(): the job's
 * spank_job_env then carries SAR_PATTERN, job_submit.lua copies it into admin_comment (where
 * libslurm, squeue and slurmrestd show it to sar-filterd), and PrologSlurmctld sees
 * SPANK_SAR_PATTERN.
 *
 * On the compute nodes (slurmstepd, remote context) an alltoall job's tasks get
 * SAR_FORS_SCHEDULE=<mapping>.fors.<job id>: where the router publishes the job's FORS schedule
 * (docs/fors.md). <mapping> is the plugin argument mapping=PATH in plugstack.conf (default
 * /var/lib/sar/jobs.map, the mapping_file of sar-filterd and osmsar).
 */
#include <slurm/spank.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

SPANK_PLUGIN(sar_pattern, 1);

/* The option callback and slurm_spank_init_post_opt() are separate calls with no user data
 * between them; SPANK gives a plugin no other place than a file-scope variable to keep the
 * parsed value. It lives only in the client process for one submission. */
static const char* chosen_pattern = NULL;

static const char* const kPatterns[] = {"alltoall", "default"};

static const char kDefaultMapping[] = "/var/lib/sar/jobs.map";

static int OnSarPattern(int val, const char* optarg, int remote) {
  (void)val;
  for (size_t i = 0; i < sizeof(kPatterns) / sizeof(kPatterns[0]); ++i) {
    if (optarg != NULL && strcmp(optarg, kPatterns[i]) == 0) {
      chosen_pattern = kPatterns[i];
      return 0;
    }
  }
  /* remote (slurmstepd) never gets here with a bad value: the client refused it first. */
  if (!remote) {
    slurm_error("sar_pattern: invalid --sar-pattern '%s': expected 'alltoall' or 'default'",
                optarg ? optarg : "");
  }
  return -1;
}

static struct spank_option sar_pattern_option = {
    "sar-pattern",
    "alltoall|default",
    "Communication pattern of the job for SAR routing: 'alltoall' asks for FORS phased routing "
    "on 2-level fat-trees, 'default' (the same as no option) for SAR.",
    1,
    0,
    OnSarPattern};

int slurm_spank_init(spank_t sp, int ac, char** av) {
  (void)ac;
  (void)av;
  const spank_context_t ctx = spank_context();
  /* Registered at run time: sbatch does not see a static spank_options[] table. */
  if (ctx == S_CTX_ALLOCATOR || ctx == S_CTX_LOCAL || ctx == S_CTX_REMOTE) {
    if (spank_option_register(sp, &sar_pattern_option) != ESPANK_SUCCESS) {
      slurm_error("sar_pattern: cannot register --sar-pattern");
      return -1;
    }
  }
  return 0;
}

int slurm_spank_init_post_opt(spank_t sp, int ac, char** av) {
  (void)ac;
  (void)av;
  const spank_context_t ctx = spank_context();
  if (chosen_pattern == NULL || (ctx != S_CTX_ALLOCATOR && ctx != S_CTX_LOCAL)) return 0;
  /* srun inside an existing allocation does not create a job; setting the control env there is
   * harmless (SLURM ignores it for steps). */
  if (spank_job_control_setenv(sp, "SAR_PATTERN", chosen_pattern, 1) != ESPANK_SUCCESS) {
    slurm_error("sar_pattern: cannot pass --sar-pattern=%s to the controller", chosen_pattern);
    return -1;
  }
  return 0;
}

/* The job's tasks learn where their FORS schedule is. The file itself appears (and changes) when
 * the router reroutes; the job reads its header's generation to see which routing it follows. */
int slurm_spank_task_init(spank_t sp, int ac, char** av) {
  const char* mapping = kDefaultMapping;
  uint32_t job_id = 0;
  char path[4096];
  int i;
  if (spank_context() != S_CTX_REMOTE || chosen_pattern == NULL ||
      strcmp(chosen_pattern, "alltoall") != 0) {
    return 0;
  }
  for (i = 0; i < ac; ++i) {
    if (strncmp(av[i], "mapping=", 8) == 0 && av[i][8] != '\0') mapping = av[i] + 8;
  }
  if (spank_get_item(sp, S_JOB_ID, &job_id) != ESPANK_SUCCESS) {
    slurm_error("sar_pattern: no job id for SAR_FORS_SCHEDULE");
    return 0; /* the job runs anyway, without the hint */
  }
  if (snprintf(path, sizeof path, "%s.fors.%u", mapping, job_id) >= (int)sizeof path) {
    slurm_error("sar_pattern: mapping path too long for SAR_FORS_SCHEDULE");
    return 0;
  }
  if (spank_setenv(sp, "SAR_FORS_SCHEDULE", path, 1) != ESPANK_SUCCESS) {
    slurm_error("sar_pattern: cannot set SAR_FORS_SCHEDULE");
  }
  return 0;
}
