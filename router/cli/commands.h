// The sar-route subcommands, one file each (cmd_<name>.cc). See cli_common.h for Subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>

namespace sarcli {

std::function<int()> SetupGen(CLI::App* cmd);
std::function<int()> SetupInfo(CLI::App* cmd);
std::function<int()> SetupEval(CLI::App* cmd);
std::function<int()> SetupConvertLfts(CLI::App* cmd);
std::function<int()> SetupDiffLfts(CLI::App* cmd);
std::function<int()> SetupJobMix(CLI::App* cmd);
std::function<int()> SetupCompare(CLI::App* cmd);
std::function<int()> SetupRoute(CLI::App* cmd);
std::function<int()> SetupFors(CLI::App* cmd);
std::function<int()> SetupReplay(CLI::App* cmd);
std::function<int()> SetupStudy(CLI::App* cmd);
std::function<int()> SetupForsSchedule(CLI::App* cmd);
std::function<int()> SetupMerge(CLI::App* cmd);

}  // namespace sarcli
