/**
 * At most `max` tasks running at once, at most `maxWaiting` queued behind them; a task that
 * finds the queue full is refused at once (`run` resolves to null) rather than piling up.
 */
export class Gate {
  private running = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(private readonly max: number, private readonly maxWaiting: number) {}

  async run<T>(task: () => Promise<T>): Promise<{ value: T } | null> {
    if (this.running >= this.max) {
      if (this.waiting.length >= this.maxWaiting) return null;
      await new Promise<void>((resolve) => this.waiting.push(resolve));
    } else {
      this.running += 1;
    }
    try {
      return { value: await task() };
    } finally {
      // The slot passes straight to the next waiter, so `running` never drops and rises again.
      const next = this.waiting.shift();
      if (next) next();
      else this.running -= 1;
    }
  }
}
