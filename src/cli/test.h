/* `ftrun test DIR...`: runs test folders (the ONNX backend-test layout and
 * ftrun's own, both described in man/ftrun.1, TEST FOLDERS) and reports
 * pass, fail or unsupported per case, a summary and optionally JUnit XML.
 *
 *   int main(int argc, char **argv)      // argv[1] is "test"
 *   { return ft_cmd_test(argc - 1, argv + 1); }   // exit status 0, 1, 2, 3 or 4
 *
 * Cases run in -j worker processes (fork), each of which opens the device
 * once and runs many cases in turn, so a crash or a hang of one case is that
 * case's failure (its worker is killed and a new one takes the remaining
 * cases) and the run goes on. The parent (test.c) only scans folders and
 * schedules workers, and never opens a device; its reports are written by
 * test_report.c (test_int.h); a worker (test_case.c) loads, runs and compares.
 */
#ifndef FT_CLI_TEST_H
#define FT_CLI_TEST_H

/* argv[0] is the command word ("test"); options as in ftrun(1). */
int ft_cmd_test(int argc, char **argv);

#endif
