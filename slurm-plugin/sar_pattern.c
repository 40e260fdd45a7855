/*
 * sar_pattern.so: SPANK plugin that adds --sar-pattern=alltoall|default to sbatch, salloc and
 * srun (docs/slurm.md). The value is checked on the submit host, so a typo is refused before the
 * job exists, and it is handed to the controller with spank_job_control_setenv(): the job's
 * spank_job_env then carries SAR_PATTERN, job_submit.lua copies it into admin_comment (where
 * libslurm, squeue and slurmrestd show it to sar-filterd), and PrologSlurmctld sees
 * SPANK_SAR_PATTERN.
 */
#include <slurm/spank.h>
#include <string.h>

SPANK_PLUGIN(sar_pattern, 1);

/* The option callback and slurm_spank_init_post_opt() are separate calls with no user data
 * between them; SPANK gives a plugin no other place than a file-scope variable to keep the
 * parsed value. It lives only in the client process for one submission. */
static const char* chosen_pattern = NULL;

static const char* const kPatterns[] = {"alltoall", "default"};

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
