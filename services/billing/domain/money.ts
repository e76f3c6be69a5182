// Billing's money rules are the kit's (services/kit/money.ts), shared with tips.
export { MAX_MINOR_UNITS, money, requireAmount, requireCurrency } from "../../kit/handler/money.js";
