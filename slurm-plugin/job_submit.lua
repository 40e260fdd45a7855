--[[
job_submit.lua for sar (docs/slurm.md): copies the job's --sar-pattern (set by the SPANK plugin
sar_pattern.so as SAR_PATTERN in the job's spank environment) into its admin_comment as
"sar-pattern=<pattern>", where libslurm, squeue --json and slurmrestd show it to sar-filterd.
Other admin_comment content is kept; an older sar-pattern=... word is replaced. An admin's
AdminComment update keeps the job's pattern unless it names one itself.
Install: JobSubmitPlugins=lua in slurm.conf and this file beside slurm.conf.
--]]

local PATTERNS = { alltoall = true, default = true }

-- The value of NAME in the job's spank environment ("NAME=value" strings), or nil.
local function spank_env_value(job_desc, name)
   local env = job_desc.spank_job_env
   if env == nil then
      return nil
   end
   local prefix = name .. "="
   for _, entry in pairs(env) do
      if type(entry) == "string" and entry:sub(1, #prefix) == prefix then
         return entry:sub(#prefix + 1)
      end
   end
   return nil
end

-- admin_comment with its sar-pattern word set to `pattern`; the rest is kept as it was.
local function with_pattern(comment, pattern)
   local rest = (comment or ""):gsub("sar%-pattern=[^,%s]*", "")
   rest = rest:gsub("^[,%s]+", ""):gsub("[,%s]+$", "")
   if rest == "" then
      return "sar-pattern=" .. pattern
   end
   return rest .. ",sar-pattern=" .. pattern
end

function slurm_job_submit(job_desc, part_list, submit_uid)
   local pattern = spank_env_value(job_desc, "SAR_PATTERN")
   if pattern == nil then
      return slurm.SUCCESS
   end
   if not PATTERNS[pattern] then
      slurm.log_user("invalid --sar-pattern '%s': expected 'alltoall' or 'default'", pattern)
      return slurm.ERROR
   end
   job_desc.admin_comment = with_pattern(job_desc.admin_comment, pattern)
   slurm.log_debug("sar: job from uid %u: admin_comment '%s'", submit_uid,
                   job_desc.admin_comment)
   return slurm.SUCCESS
end

-- The value of a comment's sar-pattern word, or nil.
local function pattern_in(comment)
   if comment == nil then
      return nil
   end
   return comment:match("sar%-pattern=([^,%s]*)")
end

-- `scontrol update job AdminComment=...` replaces the whole comment. The pattern came from the
-- user's --sar-pattern, so a new comment without a sar-pattern word keeps the job's pattern;
-- one with it sets it (an unknown value is refused). Other updates leave admin_comment nil.
function slurm_job_modify(job_desc, job_rec, part_list, modify_uid)
   local new = job_desc.admin_comment
   if new == nil then
      return slurm.SUCCESS
   end
   local given = pattern_in(new)
   if given ~= nil then
      if not PATTERNS[given] then
         slurm.log_user("invalid sar-pattern '%s' in AdminComment: expected 'alltoall' or "
                        .. "'default'", given)
         return slurm.ERROR
      end
      return slurm.SUCCESS
   end
   local kept = pattern_in(job_rec.admin_comment)
   if kept ~= nil then
      job_desc.admin_comment = with_pattern(new, kept)
      slurm.log_info("sar: job %u: AdminComment update by uid %u keeps sar-pattern=%s",
                     job_rec.job_id, modify_uid, kept)
   end
   return slurm.SUCCESS
end

return slurm.SUCCESS
