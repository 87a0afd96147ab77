import { asciiSlug, FAMILY_NAMES, GIVEN_NAMES, SeededRandom } from "../random";

export interface TenantSize {
  users: number;
  teams: number;
  roles: number;
  /** Most teams a user belongs to (each user is in 0 to this many). */
  maxTeamsPerUser?: number;
  /** Share of users with `isActive: false`. */
  disabledShare?: number;
}

export interface SimUser {
  id: number;
  loginId: string;
  firstName: string;
  lastName: string;
  fullName: string;
  email: string;
  isActive: boolean;
  jobTitle: string;
  timeZoneId: string;
  defaultRoleId: number;
  /** Extra roles, present on some users only. */
  roles?: number[];
}

export interface SimTeam {
  id: number;
  name: string;
  uniqueCode: string;
}

export interface SimRole {
  id: number;
  name: string;
}

export interface Tenant {
  instanceGuid: string;
  users: SimUser[];
  teams: SimTeam[];
  roles: SimRole[];
  /** team id -> member user ids, and the reverse index. */
  teamMembers: Map<number, number[]>;
  userTeams: Map<number, number[]>;
}

const CITIES = [
  "Zürich",
  "São Paulo",
  "Kraków",
  "東京",
  "Reykjavík",
  "Montréal",
  "London",
  "Austin",
];
const FUNCTIONS = ["Close", "Reconciliation", "Intercompany", "Audit", "Treasury", "Tax"];
const JOB_TITLES = ["Controller", "Accountant", "Analyst", "Auditor", "CFO", "Clerk"];
const TIME_ZONES = ["UTC", "Europe/Zurich", "America/Sao_Paulo", "Asia/Tokyo"];

/** A deterministic synthetic BlackLine tenant: the same seed and sizes give the same data. */
export function generateTenant(size: TenantSize, seed = 1): Tenant {
  const random = new SeededRandom(seed);
  const roles: SimRole[] = Array.from({ length: size.roles }, (_, i) => ({
    id: 10 + i,
    name: `${random.pick(JOB_TITLES)} ${i + 1}`,
  }));
  const teams: SimTeam[] = Array.from({ length: size.teams }, (_, i) => ({
    id: 500 + i,
    name: `${random.pick(CITIES)} ${random.pick(FUNCTIONS)} ${i + 1}`,
    uniqueCode: `T${String(i + 1).padStart(4, "0")}`,
  }));
  const users: SimUser[] = Array.from({ length: size.users }, (_, i) => {
    const id = 1000 + i;
    const firstName = random.pick(GIVEN_NAMES);
    const lastName = random.pick(FAMILY_NAMES);
    const login = `${asciiSlug(firstName)}.${asciiSlug(lastName)}.${id}@example.com`;
    const user: SimUser = {
      id,
      loginId: login,
      firstName,
      lastName,
      fullName: `${firstName} ${lastName}`,
      email: login,
      isActive: !random.chance(size.disabledShare ?? 0.07),
      jobTitle: random.pick(JOB_TITLES),
      timeZoneId: random.pick(TIME_ZONES),
      defaultRoleId: roles.length > 0 ? random.pick(roles).id : 0,
    };
    if (roles.length > 1 && random.chance(0.15)) user.roles = [random.pick(roles).id];
    return user;
  });

  const teamMembers = new Map<number, number[]>(teams.map((t) => [t.id, []]));
  const userTeams = new Map<number, number[]>();
  for (const user of users) {
    const count = teams.length === 0 ? 0 : random.int((size.maxTeamsPerUser ?? 3) + 1);
    const chosen = new Set<number>();
    for (let k = 0; k < count; k++) chosen.add(random.pick(teams).id);
    userTeams.set(user.id, [...chosen]);
    for (const teamId of chosen) teamMembers.get(teamId)?.push(user.id);
  }
  return { instanceGuid: random.uuid(), users, teams, roles, teamMembers, userTeams };
}
