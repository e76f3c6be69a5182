/**
 * The viewers this instance saw since its last flush, in memory: a read of a live stream's playback or a watch
 * heartbeat marks (stream, caller key) here, never in the database; `workers/viewers.ts` writes them as one batch.
 */
export class ViewerMarks {
  private marks = new Map<string, Map<string, Date>>();

  /** Marks a viewer of a stream; the latest time wins. A caller without a key (in process, anonymous) is not counted. */
  see(streamId: string, viewer: string, at: Date): void {
    if (viewer === "") return;
    let seen = this.marks.get(streamId);
    if (!seen) this.marks.set(streamId, (seen = new Map()));
    seen.set(viewer, at);
  }

  /** The marks since the last drain, which start over empty. */
  drain(): { streamId: string; viewer: string; seenAt: Date }[] {
    const drained = [...this.marks].flatMap(([streamId, seen]) =>
      [...seen].map(([viewer, seenAt]) => ({ streamId, viewer, seenAt })),
    );
    this.marks = new Map();
    return drained;
  }
}
