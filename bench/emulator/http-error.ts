/** An error that is its own OpenAI-style response: `{"error":{"message","type","param","code"}}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly type: string = "invalid_request_error",
    readonly param: string | null = null,
    readonly code: string | null = null,
  ) {
    super(message);
  }

  body(): string {
    return JSON.stringify({
      error: { message: this.message, type: this.type, param: this.param, code: this.code },
    });
  }
}

export function badRequest(message: string, param: string | null = null): HttpError {
  return new HttpError(400, message, "invalid_request_error", param);
}
