/** Orders by group and by user, as index arrays in time order; rebuilt lazily after orders are appended. */
import type { OrderStore } from './order-store.js';

export class OrderIndex {
  private builtFor = -1;
  private groups: Int32Array[] = [];
  private userStart = new Int32Array(1);
  private userOrders = new Int32Array(0);

  constructor(
    private readonly store: OrderStore,
    private readonly groupCount: number,
    private readonly maxUserId: () => number,
  ) {}

  /** A group's orders (store indexes, time order). */
  ofGroup(groupIndex: number): Int32Array {
    this.ensure();
    return this.groups[groupIndex];
  }

  /** A user's orders (store indexes, time order). */
  ofUser(userId: number): Int32Array {
    this.ensure();
    if (userId + 1 >= this.userStart.length) return new Int32Array(0);
    return this.userOrders.subarray(this.userStart[userId], this.userStart[userId + 1]);
  }

  /** The slice of `list` whose creation times fall in [from, to] (both inclusive). */
  range(list: Int32Array, from: number, to: number): Int32Array {
    const at = this.store.createdAt;
    const bound = (t: number, strict: boolean) => {
      let lo = 0;
      let hi = list.length;
      while (lo < hi) {
        const mid = (lo + hi) >>> 1;
        if (strict ? at[list[mid]] <= t : at[list[mid]] < t) lo = mid + 1;
        else hi = mid;
      }
      return lo;
    };
    return list.subarray(bound(from, false), bound(to, true));
  }

  private ensure(): void {
    const s = this.store;
    if (this.builtFor === s.version) return;
    const counts = new Int32Array(this.groupCount);
    const users = this.maxUserId() + 2;
    const userCounts = new Int32Array(users);
    for (let i = 0; i < s.count; i++) {
      if (s.hidden[i]) continue;
      counts[s.group[i]]++;
      userCounts[s.user[i] + 1]++;
    }
    this.groups = Array.from(counts, (n) => new Int32Array(n));
    const fill = new Int32Array(this.groupCount);
    for (let u = 1; u < users; u++) userCounts[u] += userCounts[u - 1];
    this.userStart = userCounts;
    this.userOrders = new Int32Array(userCounts[users - 1]);
    const cursor = userCounts.slice();
    for (let i = 0; i < s.count; i++) {
      if (s.hidden[i]) continue;
      const g = s.group[i];
      this.groups[g][fill[g]++] = i;
      this.userOrders[cursor[s.user[i]]++] = i;
    }
    this.builtFor = s.version;
  }
}
