/**
 * Names of the simulator's reports (sim/main.ts builds them: workload, fleet, load, variant, set, seed,
 * preset). A run with the gateway's scrape on and no second client (`--scrape-ms N`) is the race's run of
 * the same name with `-scrapeN` after the load: the report it stands beside.
 */

/** The race's report name for a scrape run's (`…-r40-scrape1000-scoring-s3.json` → `…-r40-scoring-s3.json`). */
export function raceReportName(name: string): string {
  return name.replace(/-scrape\d+(?=-|\.json$)/, "");
}
