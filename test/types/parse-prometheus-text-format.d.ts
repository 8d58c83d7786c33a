// parse-prometheus-text-format ships no types: the shape of what it returns, as its README documents it.
declare module "parse-prometheus-text-format" {
  interface PrometheusSample {
    readonly value?: string;
    readonly labels?: Readonly<Record<string, string>>;
    readonly buckets?: Readonly<Record<string, string>>;
    readonly quantiles?: Readonly<Record<string, string>>;
    readonly count?: string;
    readonly sum?: string;
  }
  interface PrometheusFamily {
    readonly name: string;
    readonly help: string;
    /** Upper case: COUNTER, GAUGE, HISTOGRAM, SUMMARY, UNTYPED. */
    readonly type: string;
    readonly metrics: readonly PrometheusSample[];
  }
  export default function parsePrometheusTextFormat(text: string): PrometheusFamily[];
}
