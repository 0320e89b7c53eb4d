// parpat: parallel patterns from the command line. Every failure is one line on stderr and
// exit status 2.
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "parpat/error.hpp"
#include "ranks.hpp"
#include "runtime/tuning.hpp"

namespace {

// The CPU backend reads files through mapped windows; a file that another process shortens
// while it is read turns the next read of a vanished page into SIGBUS. That is bad input, not a
// crash: one line and exit status 2.
extern "C" void on_sigbus(int) {
  const char msg[] = "parpat: error: the input file shrank while it was read\n";
  ssize_t ignored = ::write(STDERR_FILENO, msg, sizeof msg - 1);
  (void)ignored;
  ::_exit(2);
}

// The error for a command line that names no command (CLI11 says only that one is required):
// the word given, the commands there are, and where numpy's bincount lives. Empty where the first
// word is a command or an option.
std::string missing_command(const CLI::App& app, int argc, char** argv) {
  const std::string word = argc > 1 ? argv[1] : "";
  if (!word.empty() && word[0] == '-') return "";
  std::string names;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (sub->check_name(word)) return "";
    names += (names.empty() ? "" : ", ") + sub->get_name();
  }
  if (word.empty()) return "a command is required (the commands: " + names + ")";
  std::string msg = "unknown command '" + word + "' (the commands: " + names + ")";
  if (word == "bincount") msg += "; numpy.bincount is `parpat histogram --per-value`";
  return msg;
}

}  // namespace

int main(int argc, char** argv) {
  std::signal(SIGBUS, on_sigbus);
  CLI::App app{"parpat: parallel patterns (reduce, histogram, ...) on CUDA, OpenCL and the CPU"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "parpat 0.1.0");
  parpat::cli::add_info_command(app);
  parpat::cli::add_list_command(app);
  parpat::cli::add_reduce_command(app);
  parpat::cli::add_histogram_command(app);
  parpat::cli::add_histogramdd_command(app);
  parpat::cli::add_pairwise_command(app);
  parpat::cli::add_barrier_command(app);
  parpat::cli::add_bench_command(app);
  try {
    parpat::detail::check_tuning_overrides();
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    const std::string missing = missing_command(app, argc, argv);
    std::cerr << "parpat: error: " << (missing.empty() ? e.what() : missing) << "\n";
    return 2;
  } catch (const parpat::Error& e) {
    // An error every rank agreed on is printed once, by rank 0.
    if (e.call() != "collective" || !parpat::cli::secondary_rank()) {
      std::string msg = e.what();
      for (auto& c : msg)
        if (c == '\n') c = ' ';
      std::cerr << "parpat: error: " << msg << "\n";
    }
    parpat::cli::finish_ranks(2, e.call() == "timeout");
    return 2;
  } catch (const std::exception& e) {
    std::cerr << "parpat: error: " << e.what() << "\n";
    parpat::cli::finish_ranks(2, true);
    return 2;
  }
  parpat::cli::finish_ranks(0, false);
  // The answer is out: leave without tearing down device contexts and page-locked staging
  // (about 0.1 s for a CUDA context), which the operating system reclaims anyway.
  std::cout.flush();
  if (!std::cout) {
    std::cerr << "parpat: error: cannot write the answer to standard output\n";
    return 2;
  }
  std::fflush(nullptr);
  std::_Exit(0);
}
