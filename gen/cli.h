/* cli.h: the convgrad command line: subcommands and the helpers they share. */
#ifndef CG_CLI_H
#define CG_CLI_H

#include "cg_abi.h"
#include "convgrad.h"
#include "pack.h"
#include "tuning_db.h"

/* Digest of the generator's sources and templates at build time (build/gen/build_id.c): part
 * of every kernel cache key. */
extern const char cg_generator_build_id[];

/* Exit status for a status: 0 ok, 2 bad input (problem, file, arguments, pack), 1 otherwise. */
int cg_cli_exit_code(cg_status status);

/* Prints "convgrad: <where>: <msg>" on one line to stderr and returns the exit code. */
int cg_cli_fail(cg_status status, const char *where, const char *msg);

/* Prints "convgrad: <command>: <what>" for bad arguments and returns 2. */
int cg_cli_usage_error(const char *command, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* Parses a positive integer option value; 0 on success. */
int cg_cli_int(const char *text, int64_t min, int64_t max, int64_t *value);

/* Loads the problem(s) of a config; with `name` non-NULL only that one. */
cg_status cg_cli_load_problems(const char *path, const char *name, cg_problem **problems,
                               int *count, char msg[CG_MSG_MAX]);

/* Parses "cpu", "vulkan", "cpu,vulkan" into CG_TARGET_* bits; "ref" sets *ref. 0 on success. */
int cg_cli_targets(const char *text, unsigned *targets, int *ref);

/* Parses "avx512,avx2,generic" into an ISA mask. 0 on success. */
int cg_cli_isas(const char *text, unsigned *mask);

/* The kernel cache: $CONVGRAD_CACHE, else out/cache beside the templates (the source tree). */
cg_status cg_cli_cache_root(char *out, size_t cap, char msg[CG_MSG_MAX]);

/* The pack that serves one problem on a target: `pack_dir` when given, else a cache directory
 * under out/cache/ (generated and built on first use, reused after; concurrent processes
 * serialize on a lock file), whose CPU plan takes the `tuning` database's entry for the problem
 * when there is one (NULL: heuristics). Opens it and creates the executable. */
cg_status cg_cli_executable(const cg_problem *problem, cgrt_target target, const char *pack_dir,
                            int isa, const cg_tuning_db *tuning, cgrt_pack **pack,
                            cgrt_executable **exe, char *where, size_t where_cap,
                            char msg[CG_MSG_MAX]);

/* Whether the pack's manifest marks the problem's variant for `isa` as tuned (0 when unknown). */
int cg_cli_pack_tuned(const char *pack_dir, const char *canonical, cg_isa isa);

/* ---- the tuning database (cli_tuning.c) ---- */

/* Its path: `db_option` (--db), else $CONVGRAD_TUNING_DB (both explicit), else the user-level
 * default $XDG_CACHE_HOME/convgrad/tuning.json or $HOME/.cache/convgrad/tuning.json. */
cg_status cg_cli_tuning_path(const char *db_option, char *path, size_t cap, int *explicit_path,
                             char msg[CG_MSG_MAX]);

/* The database gen, plan, run and bench consult (empty with `no_tuning`). A missing file is
 * empty; a damaged explicit one is an error (`where` names it); a damaged default one is a
 * warning on stderr and an empty database. */
cg_status cg_cli_tuning_load(const char *db_option, int no_tuning, cg_tuning_db *db,
                             char *where, size_t where_cap, char msg[CG_MSG_MAX]);

/* Merges one entry into the database file under a lock and writes it atomically (temporary +
 * rename); a damaged default database is moved to PATH.corrupt first (with a warning). */
cg_status cg_cli_tuning_store(const char *path, int explicit_path, const cg_tuning_entry *entry,
                              char msg[CG_MSG_MAX]);

int cg_cmd_gen(int argc, char **argv);
int cg_cmd_build(int argc, char **argv);
int cg_cmd_run(int argc, char **argv);
int cg_cmd_bench(int argc, char **argv);
int cg_cmd_import(int argc, char **argv);
int cg_cmd_plan(int argc, char **argv);
int cg_cmd_sweep(int argc, char **argv);
int cg_cmd_sweep_merge(int argc, char **argv);
int cg_cmd_tune(int argc, char **argv);

#endif /* CG_CLI_H */
