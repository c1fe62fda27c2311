/** Word lists for generated people, brands and offers. */
export const FIRST_NAMES = [
  'Olivia', 'Amelia', 'Isla', 'Ava', 'Mia', 'Noah', 'Oliver', 'George', 'Arthur', 'Leo', 'Harry', 'Chloé', 'Zoë', 'Siobhán',
  'José', 'Mohammed', 'Aisha', 'Priya', 'Wei', 'Yuki', 'Liam', 'Emma', 'Sophia', 'Lucas', 'Ethan', 'Charlotte', 'Jack',
  'Grace', 'Ruby', 'Henry', 'Matilda', 'Oscar', 'Freya', 'Théo', 'Anaïs', 'Kai', 'Nia', 'Omar', 'Léa', 'Mateo',
] as const;

export const LAST_NAMES = [
  'Smith', 'Jones', 'Taylor', 'Brown', 'Williams', 'Wilson', 'Johnson', 'Davies', "O'Brien", 'Patel', 'Nguyen', 'García',
  'Müller', 'Martin', 'Bernard', 'Dubois', 'Kelly', 'Walsh', 'Murphy', 'Chen', 'Wang', 'Singh', 'Khan', 'Ali', 'Evans',
  'Thomas', 'Roberts', 'Lewis', 'Hughes', 'Edwards', 'Anderson', 'Thompson', 'White', 'Harris', 'MacDonald', 'Lefèvre',
] as const;

export const BRANDS = [
  'Amazon', 'Argos', 'ASOS', 'Boots', 'Currys', 'Deliveroo', 'Just Eat', 'John Lewis', 'Marks & Spencer', 'Nike', 'Odeon',
  'Pizza Express', 'Sainsbury\u2019s', 'Tesco', 'Uber', 'Waitrose', 'Zalando', 'Ikea', 'Apple', 'Cineworld', 'Costa Coffee',
  'Starbucks', 'H&M', 'Decathlon', 'Airbnb', 'Eurostar', 'Woolworths', 'Target', 'Best Buy', 'Fnac',
] as const;

export const COLLECTIONS = [
  { id: 1, name: 'Food & Drink' },
  { id: 2, name: 'Fashion' },
  { id: 3, name: 'Tech' },
  { id: 4, name: 'Travel' },
  { id: 5, name: 'Entertainment' },
  { id: 6, name: 'Groceries' },
  { id: 7, name: 'Home' },
] as const;

export const COMPANIES = ['Northwind Ltd', 'Contoso Pty', 'Globex Inc', 'Initech SARL', 'Umbrella plc'] as const;
export const LOCATIONS = ['London', 'Manchester', 'New York', 'Boston', 'Sydney', 'Melbourne', 'Paris', 'Lyon'] as const;
